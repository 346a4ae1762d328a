"""The words of a text as both keyword indexes count them: the tokenizer and BM25's parameters.

One tokenizer for everything that weighs words: the embedded BM25 index
(search/bm25_index.py), PostgreSQL's postings (storage/postgres/keywords.py), rescoring,
relevance and spelling. It lives below storage and search so that both read the same words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from index.ingest.word_forms import base_form

__all__ = ["BM25_B", "BM25_K1", "TOKENIZER_VERSION", "terms_of_words", "tokenize"]

# Every run of letters or digits is a word, one character long included: bm25s's default
# pattern (\w\w+) drops "5" in "Super Bowl 5" and the "9" in "9/11". Single letters are kept
# out (the "s" of "Tesla's"), single digits kept in. On SQuAD v1.1 dev (48 articles pooled)
# stemming plus these tokens took BM25 Recall@1 from 0.749 to 0.769.
_TOKEN = re.compile(r"\w+")
# Lucene's 33 English stopwords, plus question words, auxiliaries and pronouns: "which" or
# "did" in a question says nothing about which passage answers it. +0.6 points of fused
# Recall@1 on SQuAD dev over Lucene's list alone; NLTK's longer list did no better.
_LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
_STOPWORDS = _LUCENE_STOPWORDS | frozenset(
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
