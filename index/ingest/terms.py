"""BM25's parameters, and the English analysis under the names the English rules use.

Every text is analysed by analysis.py, per language; the embedded BM25 index
(search/bm25_index.py), PostgreSQL's postings (storage/postgres/keywords.py), rescoring,
relevance and composing read it there. `tokenize` is its English chain, for the rules written
for English only (spelling correction, a follow-up's context words).
"""

from __future__ import annotations

from index.text import ENGLISH, ENGLISH_STOPWORDS, analyzer, base_form, stem

__all__ = ["BM25_B", "BM25_K1", "TOKENIZER_VERSION", "terms_of_words", "tokenize"]

# BM25's term saturation and length normalization: Anserini's defaults rather than bm25s's
# (1.5, 0.75). News paragraphs are a sentence or two, and the usual b punishes the longer ones
# that hold the facts. With word pairs at 0.5 (ranking.py), `articlebot eval`: news tuning half
# pooled R@1 0.461 -> 0.465, R@5 0.697 -> 0.717, containment 0.485 -> 0.512; SQuAD v1.1 pooled
# R@1 0.835 -> 0.840 (0.839 from BM25 alone). b 0.3-0.5 and k1 0.9-1.5 lie on a plateau on news.
BM25_K1 = 0.9
BM25_B = 0.4
# Raised whenever analysis.py changes what it returns: keyword indexes saved before are stale.
TOKENIZER_VERSION = 4

_english = analyzer(ENGLISH)


def tokenize(text: str) -> list[str]:
    """Lower-cased words without English stopwords, in base form ("said" -> "say":
    word_forms.py) and stemmed, in order: analysis.py's English chain."""
    return _english(text)


def _is_term(word: str) -> bool:
    return word not in ENGLISH_STOPWORDS and (len(word) > 1 or word.isdigit())


def terms_of_words(words: list[str]) -> list[str | None]:
    """Each English word's keyword term, or None for a stopword: `tokenize` of each word alone,
    in one stemmer call and outside its cache (spelling.py tries hundreds of words at a time)."""
    words = [w.casefold() for w in words]
    stems = iter(stem([base_form(w) for w in words if _is_term(w)], ENGLISH))
    return [next(stems) if _is_term(w) else None for w in words]
