"""Which embeddings the answer-quality tests run on.

Answers must not depend on the CPU: the quality checks run on the default model,
multilingual-e5-small on its engine (the same AVX2 code on every x86-64 CPU that runs it), and
on all-MiniLM-L6-v2, the model older collections keep, in every int8 export this kind of CPU can
run (each x86-64 export runs on any x86-64 CPU) and in the torch fp32 fallback.
"""

from __future__ import annotations

import platform

from index.embedding.e5_engine import available

X86 = platform.machine().lower() in {"x86_64", "amd64"}
MINILM_EMBEDDINGS = ["avx2", "avx512_vnni", "torch"] if X86 else ["arm64", "torch"]
ALL_EMBEDDINGS = (["e5"] if available() else []) + MINILM_EMBEDDINGS
