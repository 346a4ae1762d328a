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

from . import ranking
from .bm25 import tokenize
from .language import is_english, names_and_numbers
from .ranking import RESCORE_DEPTH, Hit, Terms, fuse, rescore, term_weights, top_hits
from .relevance import min_relevance, relevance
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

    def leading_passages(self, article_ids: list[int], paragraphs: int) -> list[Passage]: ...

    def passages(self, ids: list[int]) -> dict[int, Passage]: ...

    def story_words(self, article_id: int) -> set[str]: ...


@dataclass(frozen=True)
class Retrieved:
    """The ranked hits, their passages, and what composing an answer needs to weigh words."""

    hits: list[Hit]
    passages: dict[int, Passage]
    terms: KeywordSide
    searched: int  # how many passages the hits were chosen from
    relevant: bool  # whether the best hit is about the question at all
    english: bool  # whether the question is in English, the language of the keyword side


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
        backend = self.backend
        if article_ids is not None:
            keywords = backend.keywords(set(article_ids))
            dense = self._dense_among(query, set(article_ids))
        else:
            keywords = backend.keywords()
            dense = backend.dense(query, CANDIDATES)
        cosine = {int(i): float(s) for s, i in zip(*dense, strict=True)}
        # A question in another language shares only names and numbers with English articles;
        # its other words would match English ones by chance ("die", "was") and drag the ranking.
        english = is_english(question)
        if not english:
            question = names_and_numbers(question)
        found = keywords.search(question, CANDIDATES)
        bm25 = {int(i): float(s) for s, i in zip(*found, strict=True)}
        # Each candidate is judged on both signals: what one side found, the other side scores.
        cosine.update(backend.cosines(query, [pid for pid in bm25 if pid not in cosine]))
        if bm25:  # without any shared keyword the BM25 side is zero for every passage
            bm25.update(keywords.scores(question, [pid for pid in cosine if pid not in bm25]))
        depth = max(top_k, RESCORE_DEPTH)
        hits = top_hits(cosine, bm25, fuse(cosine, bm25), depth)
        passages = backend.passages([h.passage_id for h in hits])
        hits = [h for h in hits if h.passage_id in passages]  # one removed meanwhile is gone
        if ranking.LEAD_ARTICLES and hits:
            stories = list(dict.fromkeys(passages[h.passage_id].article_id for h in hits))
            lead = backend.leading_passages(
                stories[: ranking.LEAD_ARTICLES], ranking.LEAD_PARAGRAPHS
            )
            if article_ids is not None:
                lead = [p for p in lead if p.article_id in article_ids]
            new = [p for p in lead if p.id not in passages]
            if new:
                passages.update({p.id: p for p in new})
                ids = [p.id for p in new]
                cosine.update(backend.cosines(query, ids))
                if bm25:
                    bm25.update(keywords.scores(question, ids))
                keep = {h.passage_id for h in hits} | set(ids)
                fused = {pid: s for pid, s in fuse(cosine, bm25).items() if pid in keep}
                hits = top_hits(cosine, bm25, fused, len(fused))
        hits = rescore(question, hits, passages, tokenize, keywords, top_k)
        return Retrieved(
            hits,
            passages,
            keywords,
            len(keywords),
            bool(hits) and self._relevant(question, hits[0], passages, keywords),
            english,
        )

    def _relevant(
        self, question: str, best: Hit, passages: dict[int, Passage], keywords: KeywordSide
    ) -> bool:
        """Whether the best hit is about the question (relevance.py), or the bot declines."""
        weights = term_weights(question, tokenize, keywords)
        total = sum(weights.values()) or 1.0
        story_words = self.backend.story_words(passages[best.passage_id].article_id)
        in_story = sum(w for t, w in weights.items() if t in story_words) / total
        score = relevance(best.dense, best.coverage, in_story, len(weights))
        return score >= min_relevance(len(keywords))

    def _dense_among(
        self, query: np.ndarray, article_ids: set[int]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Dense candidates from some articles only (one chosen article, a follow-up's sources)."""
        ids = [p.id for p in self.backend.article_passages(article_ids)]
        cosine = self.backend.cosines(query, ids)
        order = sorted(ids, key=lambda i: -cosine[i])[:CANDIDATES]
        return np.array([cosine[i] for i in order]), np.array(order, dtype=np.int64)
