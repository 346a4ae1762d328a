"""Which embeddings the answer-quality tests run on.

Answers must not depend on the CPU: the quality checks run on every int8 export this kind of
CPU can run (each x86-64 export runs on any x86-64 CPU) and on the torch fp32 fallback.
"""

from __future__ import annotations

import platform

X86 = platform.machine().lower() in {"x86_64", "amd64"}
ALL_EMBEDDINGS = ["avx2", "avx512_vnni", "torch"] if X86 else ["arm64", "torch"]
