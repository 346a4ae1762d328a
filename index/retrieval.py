"""Retrieval: the passages that answer a question, ranked, from one collection's backend.

The one owner of candidates, fusion and rescoring. A backend answers narrow questions (dense
candidates, keyword candidates, the scores of given passages, the passages themselves); the
ranking rules live in ranking.py; the answer is composed elsewhere from what this returns.
"""

from __future__ import annotations

from collections.abc import Collection as Container
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .bm25 import tokenize
from .ranking import RESCORE_DEPTH, Hit, Terms, fuse, rescore
from .store import Passage

__all__ = ["Backend", "KeywordSide", "Retrieved", "Retriever"]

# How many candidates each side retrieves before fusion; more than top-k so fusion can reorder.
CANDIDATES = 50


class KeywordSide(Terms, Protocol):
    """A keyword index over some passages: ranked search, scores of given passages, word weights."""

    def __len__(self) -> int: ...

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def scores(self, query: str, ids: list[int]) -> dict[int, float]: ...


class Backend(Protocol):
    """Where a collection's passages, vectors and keyword index live."""

    def dense(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]: ...

    def keywords(self, article_ids: Container[int] | None = None) -> KeywordSide: ...

    def article_passages(self, article_ids: Container[int]) -> list[Passage]: ...

    def passages(self, ids: list[int]) -> dict[int, Passage]: ...


@dataclass(frozen=True)
class Retrieved:
    """The ranked hits, their passages, and what composing an answer needs to weigh words."""

    hits: list[Hit]
    passages: dict[int, Passage]
    terms: KeywordSide
    searched: int  # how many passages the hits were chosen from


class Retriever:
    """Ranks one collection's passages for a question: dense and keyword, fused, rescored."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    def retrieve(
        self,
        question: str,
        query: np.ndarray,
        top_k: int,
        article_ids: Container[int] | None = None,
    ) -> Retrieved:
        """The top_k passages for `question` (its embedding `query`), best first."""
        depth = max(top_k, RESCORE_DEPTH)
        backend = self.backend
        if article_ids is not None:
            keywords = backend.keywords(set(article_ids))
            dense = self._dense_among(query, set(article_ids))
        else:
            keywords = backend.keywords()
            dense = backend.dense(query, CANDIDATES)
        hits = fuse(
            dense,
            keywords.search(question, CANDIDATES),
            lambda ids: backend.cosines(query, ids),
            lambda ids: keywords.scores(question, ids),
            depth,
        )
        passages = backend.passages([h.passage_id for h in hits])
        hits = [h for h in hits if h.passage_id in passages]  # one removed meanwhile is gone
        texts = {pid: p.text for pid, p in passages.items()}
        hits = rescore(question, hits, texts, tokenize, keywords, top_k)
        return Retrieved(hits, passages, keywords, len(keywords))

    def _dense_among(
        self, query: np.ndarray, article_ids: set[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Dense candidates from some articles only (one chosen article, a follow-up's sources)."""
        ids = [p.id for p in self.backend.article_passages(article_ids)]
        cosine = self.backend.cosines(query, ids)
        order = sorted(ids, key=lambda i: -cosine[i])[:CANDIDATES]
        return np.array([cosine[i] for i in order]), np.array(order, dtype=np.int64)
