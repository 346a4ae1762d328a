"""Keyword search (BM25, bm25s): the only module that imports bm25s.

Built in memory from the stored passages; names and numbers that the dense model blurs are
matched exactly here. The same tokenizer and word weights (idf) serve the second-stage rescoring
in ranking.py and the relevance test in answer.py, so all three agree on what a word is.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections import Counter
from collections.abc import Callable

import bm25s
import numpy as np

__all__ = ["KeywordIndex", "KeywordSubset", "tokenize"]

logging.getLogger("bm25s").setLevel(logging.WARNING)

# Every run of letters or digits is a word, one character long included: bm25s's default
# pattern (\w\w+) drops "5" in "Super Bowl 5" and the "9" in "9/11". Single letters are kept
# out (the "s" of "Tesla's"), single digits kept in. On SQuAD v1.1 dev (48 articles pooled)
# stemming plus these tokens took BM25 Recall@1 from 0.749 to 0.769.
_TOKEN = re.compile(r"\w+")
# Lucene's 33 English stopwords, plus question words, auxiliaries and pronouns: "which" or
# "did" in a question says nothing about which passage answers it. +0.6 points of fused
# Recall@1 on SQuAD dev over Lucene's list alone; NLTK's longer list did no better.
_STOPWORDS = frozenset(bm25s.stopwords.STOPWORDS_EN) | frozenset(
    "what which who whom whose when where why how did does do doing done has have had having "
    "is am are was were be been being i me my we our you your he him his she her hers it its "
    "they them their this that these those would could should can may might must shall also".split()
)

# BM25's term saturation and length normalization: Anserini's defaults rather than bm25s's
# (1.5, 0.75). News paragraphs are a sentence or two, and the usual b punishes the longer ones
# that hold the facts. With word pairs at 0.5 (ranking.py), `articlebot eval`: news tuning half
# pooled R@1 0.461 -> 0.465, R@5 0.697 -> 0.717, containment 0.485 -> 0.512; SQuAD v1.1 pooled
# R@1 0.835 -> 0.840 (0.839 from BM25 alone). b 0.3-0.5 and k1 0.9-1.5 lie on a plateau on news.
BM25_K1 = 0.9
BM25_B = 0.4


@functools.lru_cache(maxsize=1)
def _stemmer() -> Callable[[list[str]], list[str]]:
    try:
        import Stemmer
    except ImportError:  # stemming helps recall but is not essential
        return lambda words: words
    return Stemmer.Stemmer("english").stemWords


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed words without English stopwords, in order."""
    return list(_tokens(text))


# Rescoring reads the same top passages question after question; caching their words saves
# most of its time.
@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    words = [
        w
        for w in _TOKEN.findall(text.casefold())
        if w not in _STOPWORDS and (len(w) > 1 or w.isdigit())
    ]
    return tuple(_stemmer()(words))


class KeywordIndex:
    """BM25 over passage texts, addressed by passage id."""

    def __init__(self, ids: list[int], texts: list[str]) -> None:
        self._ids = np.asarray(ids, dtype=np.int64)
        self._row = {int(pid): row for row, pid in enumerate(self._ids.tolist())}
        self._retriever: bm25s.BM25 | None = None
        tokens = [tokenize(t) for t in texts]
        self._df = Counter(t for doc in tokens for t in set(doc))
        if ids:
            self._retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
            # An empty passage still needs a token, or bm25s refuses the corpus.
            self._retriever.index([doc or [""] for doc in tokens], show_progress=False)

    def __len__(self) -> int:
        return len(self._ids)

    def idf(self, term: str) -> float:
        """BM25's weight for a word; a word in no passage weighs most (it is the most specific)."""
        n = len(self._ids)
        df = self._df.get(term, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def _known(self, query: str) -> list[str]:
        return [t for t in tokenize(query) if t in self._df]

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, passage ids) with a score above zero."""
        tokens = self._known(query)
        if self._retriever is None or k <= 0 or not tokens:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        k = min(k, len(self._ids))
        docs, scores = self._retriever.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return scores[0][keep].astype(np.float32), self._ids[docs[0][keep]]

    def scores(self, query: str, ids: list[int]) -> dict[int, float]:
        """BM25 scores of the given passages (those the dense side found and BM25 ranked low)."""
        tokens = self._known(query)
        if self._retriever is None or not tokens:
            return {pid: 0.0 for pid in ids}
        every = self._retriever.get_scores(tokens)
        return {pid: float(every[self._row[pid]]) if pid in self._row else 0.0 for pid in ids}

    def nbytes(self) -> int:
        """About how much memory the index holds."""
        held = 120 * (len(self._df) + len(self._row)) + self._ids.nbytes
        if self._retriever is not None:
            held += sum(getattr(a, "nbytes", 0) for a in self._retriever.scores.values())
        return held


class KeywordSubset:
    """A collection's keyword index, searched among some of its passages only (one article, a
    follow-up's sources): nothing is built per question, and words keep the collection's weights.
    """

    def __init__(self, index: KeywordIndex, ids: list[int]) -> None:
        self._index = index
        self._ids = ids

    def __len__(self) -> int:
        return len(self._ids)

    def idf(self, term: str) -> float:
        return self._index.idf(term)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, passage ids) among the subset, with a score above zero."""
        scores = self._index.scores(query, self._ids)
        ranked = sorted((pid for pid in scores if scores[pid] > 0), key=lambda p: -scores[p])[:k]
        return (
            np.array([scores[p] for p in ranked], dtype=np.float32),
            np.array(ranked, dtype=np.int64),
        )

    def scores(self, query: str, ids: list[int]) -> dict[int, float]:
        return self._index.scores(query, ids)
