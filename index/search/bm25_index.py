"""Keyword search (BM25, bm25s): the only module that imports bm25s.

Built in memory from the stored passages; names and numbers that the dense model blurs are
matched exactly here. Its words are text/analysis.py's, each passage read in its article's
language, and the question comes as terms analysed the same way; its word weights (idf) serve
the second-stage rescoring in ranking.py and the relevance test, so all agree on what a word is.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from index.ingest.terms import BM25_B, BM25_K1, TOKENIZER_VERSION
from index.text import profile

__all__ = ["KeywordIndex", "KeywordSubset"]

logging.getLogger("bm25s").setLevel(logging.WARNING)


class KeywordIndex:
    """BM25 over passage texts, each read in its language, addressed by passage id."""

    def __init__(self, ids: list[int], texts: list[str], languages: Sequence[str | None]) -> None:
        tokens = [profile(lang).words(t) for t, lang in zip(texts, languages, strict=True)]
        self._index(ids, tokens)

    @classmethod
    def from_tokens(cls, ids: list[int], tokens: list[list[str]]) -> KeywordIndex:
        """An index of passages already cut into words some other way (a benchmark's)."""
        index = cls.__new__(cls)
        index._index(ids, tokens)
        return index

    def _index(self, ids: list[int], tokens: list[list[str]]) -> None:
        self._ids = np.asarray(ids, dtype=np.int64)
        self._row = {int(pid): row for row, pid in enumerate(self._ids.tolist())}
        self._retriever: bm25s.BM25 | None = None
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

    def frequencies(self, terms: list[str]) -> dict[str, int]:
        """How many passages hold each term; a term in none is left out."""
        return {t: self._df[t] for t in terms if t in self._df}

    def _known(self, terms: list[str]) -> list[str]:
        return [t for t in terms if t in self._df]

    def search(self, terms: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, passage ids) for the question's terms, with a score above zero."""
        tokens = self._known(terms)
        if self._retriever is None or k <= 0 or not tokens:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        k = min(k, len(self._ids))
        docs, scores = self._retriever.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        keep = scores[0] > 0
        return scores[0][keep].astype(np.float32), self._ids[docs[0][keep]]

    def scores(self, terms: list[str], ids: list[int]) -> dict[int, float]:
        """BM25 scores of the given passages (those the dense side found and BM25 ranked low)."""
        tokens = self._known(terms)
        if self._retriever is None or not tokens:
            return {pid: 0.0 for pid in ids}
        every = self._retriever.get_scores(tokens)
        return {pid: float(every[self._row[pid]]) if pid in self._row else 0.0 for pid in ids}

    def save(self, path: Path, signature: tuple[int, int]) -> None:
        """Write the index to one file, atomically, with the store's signature when it was built:
        a process opening the collection later loads it instead of tokenizing every passage
        again (1.1 s at 2,300 passages)."""
        arrays: dict[str, np.ndarray] = {
            "signature": np.array(signature, dtype=np.int64),
            "params": np.array(_params(), dtype=np.float64),
            "ids": self._ids,
            "df_terms": _words(list(self._df)),
            "df_counts": np.array(list(self._df.values()), dtype=np.int64),
        }
        if self._retriever is not None:
            vocab = self._retriever.vocab_dict
            arrays["vocab_terms"] = _words(list(vocab))
            arrays["vocab_ids"] = np.array(list(vocab.values()), dtype=np.int64)
            scores = self._retriever.scores
            arrays |= {k: np.asarray(scores[k]) for k in ("data", "indices", "indptr")}
            arrays["num_docs"] = np.array(scores["num_docs"], dtype=np.int64)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                np.savez(out, **arrays)  # type: ignore[arg-type]
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    @classmethod
    def load(cls, path: Path, signature: tuple[int, int]) -> KeywordIndex | None:
        """The index saved at `path` if it was built at this signature with these parameters;
        None when it is missing, stale or unreadable (the caller builds it again)."""
        try:
            with np.load(path, allow_pickle=False) as saved:
                if tuple(saved["signature"]) != signature:
                    return None
                if tuple(saved["params"]) != _params():
                    return None
                index = cls.__new__(cls)
                index._ids = saved["ids"]
                index._row = {int(pid): row for row, pid in enumerate(index._ids.tolist())}
                terms = _unwords(saved["df_terms"])
                index._df = Counter(dict(zip(terms, saved["df_counts"].tolist(), strict=True)))
                index._retriever = None
                if "vocab_terms" in saved:
                    if not _consistent(saved, len(index._ids)):
                        return None
                    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
                    vocab = _unwords(saved["vocab_terms"])
                    retriever.vocab_dict = dict(
                        zip(vocab, saved["vocab_ids"].tolist(), strict=True)
                    )
                    retriever.unique_token_ids_set = set(retriever.vocab_dict.values())
                    retriever.scores = {
                        "data": saved["data"],
                        "indices": saved["indices"],
                        "indptr": saved["indptr"],
                        "num_docs": int(saved["num_docs"]),
                    }
                    retriever.nonoccurrence_array = None
                    index._retriever = retriever
                return index
        except Exception:  # derived data: whatever is wrong with the file, build it again
            return None

    def nbytes(self) -> int:
        """About how much memory the index holds."""
        held = 120 * (len(self._df) + len(self._row)) + self._ids.nbytes
        if self._retriever is not None:
            held += sum(getattr(a, "nbytes", 0) for a in self._retriever.scores.values())
        return held


def _params() -> tuple[float, float, float]:
    """What an index is built with; a saved one built with others is stale."""
    return BM25_K1, BM25_B, TOKENIZER_VERSION


def _words(words: list[str]) -> np.ndarray:
    # Words are runs of letters and digits (or empty), so a newline joins them unambiguously.
    return np.array(["\n".join(words), str(len(words))])


def _unwords(saved: np.ndarray) -> list[str]:
    joined, count = str(saved[0]), int(saved[1])
    return joined.split("\n") if count else []


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

    def frequencies(self, terms: list[str]) -> dict[str, int]:
        return self._index.frequencies(terms)

    def search(self, terms: list[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, passage ids) among the subset, with a score above zero."""
        scores = self._index.scores(terms, self._ids)
        ranked = sorted((pid for pid in scores if scores[pid] > 0), key=lambda p: -scores[p])[:k]
        return (
            np.array([scores[p] for p in ranked], dtype=np.float32),
            np.array(ranked, dtype=np.int64),
        )

    def scores(self, terms: list[str], ids: list[int]) -> dict[int, float]:
        return self._index.scores(terms, ids)


def _consistent(saved: Any, passages: int) -> bool:
    """Whether a saved keyword index's arrays fit together (each term's postings within the
    postings, each posting a passage): a file from a backup may have been written by anyone, and
    a posting out of range would fail every question instead of being built again."""
    indptr, indices, data = saved["indptr"], saved["indices"], saved["data"]
    vocab_ids = saved["vocab_ids"]
    terms = len(indptr) - 1
    return bool(
        int(saved["num_docs"]) == passages
        and terms >= 0
        and len(indices) == len(data) == int(indptr[-1])
        and (terms == 0 or (int(indptr[0]) == 0 and bool(np.all(np.diff(indptr) >= 0))))
        and (len(indices) == 0 or (int(indices.min()) >= 0 and int(indices.max()) < passages))
        # bm25s keeps the empty word as one past the last term's id
        and (len(vocab_ids) == 0 or (int(vocab_ids.min()) >= 0 and int(vocab_ids.max()) <= terms))
        and bool(np.all(np.isfinite(data)))
    )
