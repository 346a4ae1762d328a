"""Which language a text is written in (py3langid): the only module that imports it.

An article's language is identified once, when it is added, and stored with it; a question's
is identified among the languages of the articles it is asked of (search/language.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ENGLISH_QUESTION_WORDS",
    "WIDELY_WRITTEN",
    "LanguageGuess",
    "article_language",
    "identify",
    "known_languages",
    "likelihoods",
    "rank_among",
]

# An article is identified from its first paragraphs: enough text to be sure, bounded work.
_SAMPLE_CHARS = 3_000

LanguageGuess = tuple[str, float]

# A question holding any of these words is English, whatever the identifier says of its names.
ENGLISH_QUESTION_WORDS = frozenset(
    "what which who whom whose when where why how did does the of and with many much would "
    "could should".split()
)
# Widely written languages a question's language is chosen among, with the articles' own:
# limiting the choice keeps a short question from being read as a rare language with similar
# letters.
WIDELY_WRITTEN = frozenset(
    "en de fr es it pt nl sv da no fi pl cs sk hu ro tr ru uk bg el ar he fa hi bn ur id ms vi "
    "th zh ja ko".split()
)


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def known_languages() -> frozenset[str]:
    """Every language the identifier knows (ISO 639 codes)."""
    return frozenset(str(code) for code in _identifier().nb_classes)


def identify(text: str, among: Iterable[str] | None = None) -> LanguageGuess:
    """The most likely language of `text` (an ISO 639-1 code) and its probability, among all
    the identifier's languages or only `among` (those it knows)."""
    chances = likelihoods(text, among if among is not None else known_languages())
    if not chances:  # none of `among` known: among all the identifier's languages
        chances = likelihoods(text, known_languages())
    language = max(chances, key=chances.__getitem__)
    return language, chances[language]


def likelihoods(text: str, among: Iterable[str]) -> dict[str, float]:
    """How likely `text` is written in each language of `among` (those the identifier knows),
    as probabilities that sum to 1 over them."""
    wanted = set(among)
    ranked = [(str(lang), float(p)) for lang, p in _identifier().rank(text[:_SAMPLE_CHARS])]
    ranked = [(lang, p) for lang, p in ranked if lang in wanted]
    total = sum(p for _, p in ranked) or 1.0
    return {lang: p / total for lang, p in ranked}


def rank_among(text: str, languages: Iterable[str]) -> list[str]:
    """`languages` (those the identifier knows), the likeliest for `text` first."""
    wanted = set(languages)
    return [str(lang) for lang, _ in _identifier().rank(text[:_SAMPLE_CHARS]) if lang in wanted]


def article_language(paragraphs: list[str]) -> str | None:
    """The language an article is written in, from its first paragraphs; None for a text
    with too few letters to tell (a table of numbers)."""
    sample = "\n".join(paragraphs)[:_SAMPLE_CHARS]
    if sum(c.isalpha() for c in sample) < 20:
        return None
    return identify(sample)[0]
