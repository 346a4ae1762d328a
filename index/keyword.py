"""Keyword search (BM25, bm25s): the only module that imports bm25s.

Built in memory from the stored passages; names and numbers that the dense model blurs are
matched exactly here.
"""

from __future__ import annotations

import functools
import logging

import bm25s
import numpy as np

__all__ = ["KeywordIndex"]

logging.getLogger("bm25s").setLevel(logging.WARNING)


@functools.lru_cache(maxsize=1)
def _stemmer() -> object | None:
    try:
        import Stemmer

        return Stemmer.Stemmer("english")
    except ImportError:  # stemming helps recall but is not essential
        return None


class KeywordIndex:
    """BM25 over passage texts, addressed by passage id."""

    def __init__(self, ids: list[int], texts: list[str]) -> None:
        self._ids = np.asarray(ids, dtype=np.int64)
        self._retriever: bm25s.BM25 | None = None
        self._vocab: set[str] = set()
        if ids:
            tokens = self._tokenize(texts)
            self._retriever = bm25s.BM25()
            self._retriever.index(tokens, show_progress=False)
            self._vocab = set(tokens.vocab)

    def __len__(self) -> int:
        return len(self._ids)

    @staticmethod
    def _tokenize(texts: list[str]) -> bm25s.tokenization.Tokenized:
        return bm25s.tokenize(
            texts, stopwords="en", stemmer=_stemmer(), show_progress=False, lower=True
        )

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, passage ids) with a score above zero."""
        if self._retriever is None or k <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        # Query tokens as strings: bm25s maps them onto the corpus vocabulary and drops unknowns.
        tokens = bm25s.tokenize(
            [query], stopwords="en", stemmer=_stemmer(), show_progress=False, return_ids=False
        )
        tokens = [[t for t in tokens[0] if t in self._vocab]]
        if not tokens[0]:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        k = min(k, len(self._ids))
        docs, scores = self._retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return scores[0][keep].astype(np.float32), self._ids[docs[0][keep]]
