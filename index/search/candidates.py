"""The candidates of one question, each scored by both signals: what one side (dense or
keyword) found, the other scores too, so that fusion weighs every candidate on both."""

from __future__ import annotations

import numpy as np

from index.search.interface import Backend, KeywordSide
from index.search.ranking import Hit, fuse, top_hits

__all__ = ["CANDIDATES", "Candidates"]

# How many candidates each side retrieves before fusion; more than top-k so fusion can reorder.
CANDIDATES = 50


class Candidates:
    """Both signals for every candidate of one question: what one side found, the other scores.

    Cosines are kept on the rules' scale (`Calibration.cosine_scale`), so that fusion and the
    relevance rule weigh every model's alike."""

    def __init__(
        self,
        backend: Backend,
        keywords: KeywordSide,
        terms: list[str],
        query: np.ndarray,
        scale: tuple[float, float],
    ) -> None:
        self.backend, self.keywords = backend, keywords
        self.question, self.query = terms, query
        self.scale = scale
        self.cosine: dict[int, float] = {}
        self.bm25: dict[int, float] = {}

    def _cosines(self, ids: list[int]) -> dict[int, float]:
        slope, intercept = self.scale
        return {i: slope * c + intercept for i, c in self.backend.cosines(self.query, ids).items()}

    def gather(self, dense: tuple[np.ndarray, np.ndarray]) -> None:
        slope, intercept = self.scale
        self.cosine = {int(i): slope * float(s) + intercept for s, i in zip(*dense, strict=True)}
        found = self.keywords.search(self.question, CANDIDATES)
        self.bm25 = {int(i): float(s) for s, i in zip(*found, strict=True)}
        self.cosine.update(self._cosines([p for p in self.bm25 if p not in self.cosine]))
        if self.bm25:  # without any shared keyword the BM25 side is zero for every passage
            missing = [p for p in self.cosine if p not in self.bm25]
            self.bm25.update(self.keywords.scores(self.question, missing))

    def best(self, k: int) -> list[Hit]:
        return top_hits(self.cosine, self.bm25, fuse(self.cosine, self.bm25), k)

    def add(self, ids: list[int], keep: set[int]) -> list[Hit]:
        """Score more candidates; the hits among `keep` and them, fused anew."""
        self.cosine.update(self._cosines(ids))
        if self.bm25:
            self.bm25.update(self.keywords.scores(self.question, ids))
        wanted = keep | set(ids)
        fused = {pid: s for pid, s in fuse(self.cosine, self.bm25).items() if pid in wanted}
        return top_hits(self.cosine, self.bm25, fused, len(fused))
