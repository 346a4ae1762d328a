"""Keyword search (BM25, bm25s): the only module that imports bm25s.

Built in memory from the stored passages; names and numbers that the dense model blurs are
matched exactly here. The same tokenizer and word weights (idf) serve the second-stage rescoring
in ranking.py and the relevance test in answer.py, so all three agree on what a word is.
"""

from __future__ import annotations

import functools
import logging
import math
import os
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import bm25s
import numpy as np

from .word_forms import base_form

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
# Raised whenever `tokenize` changes what it returns: keyword indexes saved before are stale.
TOKENIZER_VERSION = 2


@functools.lru_cache(maxsize=1)
def _stemmer() -> Callable[[list[str]], list[str]]:
    try:
        import Stemmer
    except ImportError:  # stemming helps recall but is not essential
        return lambda words: words
    return Stemmer.Stemmer("english").stemWords


def tokenize(text: str) -> list[str]:
    """Lower-cased words without English stopwords, in base form ("said" -> "say":
    word_forms.py) and stemmed, in order."""
    return list(_tokens(text))


def _is_term(word: str) -> bool:
    return word not in _STOPWORDS and (len(word) > 1 or word.isdigit())


def terms_of_words(words: list[str]) -> list[str | None]:
    """Each word's keyword term, or None for a stopword: `tokenize` of each word alone, in one
    stemmer call and outside the cache below (spelling.py tries hundreds of words at a time)."""
    words = [w.casefold() for w in words]
    stems = iter(_stemmer()([base_form(w) for w in words if _is_term(w)]))
    return [next(stems) if _is_term(w) else None for w in words]


# "won't" would split into "won" and "t", and "won" reads as "win" (word_forms.py).
_WONT = re.compile(r"\bwon['’]t\b")


# Rescoring reads the same top passages question after question; caching their words saves
# most of its time.
@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> tuple[str, ...]:
    words = _TOKEN.findall(_WONT.sub("will not", text.casefold()))
    return tuple(_stemmer()([base_form(w) for w in words if _is_term(w)]))


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

    def frequencies(self, terms: list[str]) -> dict[str, int]:
        """How many passages hold each term; a term in none is left out."""
        return {t: self._df[t] for t in terms if t in self._df}

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
