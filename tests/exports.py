"""Which embeddings the answer-quality tests run on.

Answers must not depend on the CPU: the quality checks run on the default model,
multilingual-e5-small, in its one int8 export (every x86-64 CPU computes the same numbers with
it), and on all-MiniLM-L6-v2, the model older collections keep, in every int8 export this kind
of CPU can run (each x86-64 export runs on any x86-64 CPU) and in the torch fp32 fallback.
"""

from __future__ import annotations

import platform

from index.embedding.registry import MULTILINGUAL_E5_SMALL

X86 = platform.machine().lower() in {"x86_64", "amd64"}
INT8_EXPORTS = ["avx2", "avx512_vnni"] if X86 else ["arm64"]
MINILM_EMBEDDINGS = [*INT8_EXPORTS, "torch"]
E5_EMBEDDINGS = [] if MULTILINGUAL_E5_SMALL.unavailable_reason() else ["e5"]
ALL_EMBEDDINGS = E5_EMBEDDINGS + MINILM_EMBEDDINGS
