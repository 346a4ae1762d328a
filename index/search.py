"""Hybrid retrieval: dense (FAISS) and keyword (BM25) rankings fused into one.

Pure ranking logic over plain arrays; the indexes themselves live in vectors.py and keyword.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Hit", "fuse"]

# Reciprocal-rank fusion constant and the weight of each side, chosen on SQuAD dev (see README).
RRF_K = 60
DENSE_WEIGHT = 1.0
KEYWORD_WEIGHT = 1.0


@dataclass(frozen=True)
class Hit:
    passage_id: int
    score: float  # the fused score used for ranking
    dense: float  # cosine similarity of question and passage
    keyword: float  # BM25 score (0 when the passage shares no keyword with the question)


def fuse(
    dense: tuple[np.ndarray, np.ndarray],
    keyword: tuple[np.ndarray, np.ndarray],
    cosine_of: Callable[[list[int]], dict[int, float]],
    k: int,
) -> list[Hit]:
    """Fuse (scores, ids) from both sides into the top-k hits, best first.

    `cosine_of` gives the dense similarity of passages that only the keyword side found, so
    every hit carries both signals (the answer step and abstention use them).
    """
    dense_scores, dense_ids = dense
    kw_scores, kw_ids = keyword
    cosine = {int(i): float(s) for s, i in zip(dense_scores, dense_ids, strict=True)}
    bm25 = {int(i): float(s) for s, i in zip(kw_scores, kw_ids, strict=True)}
    fused: dict[int, float] = {}
    for rank, pid in enumerate(dense_ids):
        fused[int(pid)] = fused.get(int(pid), 0.0) + DENSE_WEIGHT / (RRF_K + rank + 1)
    for rank, pid in enumerate(kw_ids):
        fused[int(pid)] = fused.get(int(pid), 0.0) + KEYWORD_WEIGHT / (RRF_K + rank + 1)
    best = sorted(fused, key=lambda pid: -fused[pid])[:k]
    missing = [pid for pid in best if pid not in cosine]
    if missing:
        cosine.update(cosine_of(missing))
    return [Hit(pid, fused[pid], cosine.get(pid, 0.0), bm25.get(pid, 0.0)) for pid in best]
