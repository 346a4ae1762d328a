"""Which language a question is written in (py3langid): the only module that imports it.

The articles' keyword side and word rules are English; a question in another language shares
almost no words with them, so retrieval leans on the embedding alone for it, and a declined
answer says that the articles are in English.
"""

from __future__ import annotations

import functools
import re
from typing import Any

__all__ = ["is_english", "names_and_numbers"]

# Widely written languages the identifier chooses among: limiting the choice keeps a short
# English question from being read as a rare language with similar letters.
_LANGUAGES = (
    "en de fr es it pt nl sv da no fi pl cs sk hu ro tr ru uk bg el ar he fa hi bn ur id ms vi "
    "th zh ja ko"
).split()
# A question holding any of these words is English, whatever the identifier says of its names.
_ENGLISH = frozenset(
    "what which who whom whose when where why how did does the of and with many much would "
    "could should".split()
)
_WORD = re.compile(r"[^\W\d_]+")
# Below this probability the identifier is not sure enough to call a question foreign.
_SURE = 0.7


@functools.lru_cache(maxsize=1)
def _identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    identifier.set_languages(_LANGUAGES)
    return identifier


def _outside_names(text: str) -> list[str]:
    """The text's words but names: a capitalized word after the first, and a small word between
    two ("Doctor Who", "House of Commons" say nothing of the language a question is asked in)."""
    words = _WORD.findall(text)
    capital = [i > 0 and w[0].isupper() for i, w in enumerate(words)]
    if 2 * sum(capital) > len(words) - 1:  # Title Case or capitals: capitals mark no names
        return [w.casefold() for w in words]
    kept = []
    for i, word in enumerate(words):
        joins_names = 0 < i < len(words) - 1 and capital[i - 1] and capital[i + 1]
        if not capital[i] and not (joins_names and word.islower() and len(word) <= 3):
            kept.append(word.casefold())
    return kept


def is_english(text: str) -> bool:
    """Whether the text reads as English (a text too short to tell counts as English)."""
    words = [w.casefold() for w in _WORD.findall(text)]
    if len(words) < 2 or _ENGLISH.intersection(_outside_names(text)):
        return True
    language, probability = _identifier().classify(text)
    return bool(language == "en" or probability < _SURE)


# A word that carries across languages: a name (capitalized, not the first word) or a number.
_CARRIED = re.compile(r"(?<=\s)[^\W\d_]*[A-Z][\w'’-]*|\w*\d\w*")


def names_and_numbers(text: str) -> str:
    """The words of a text that read the same in any language: names and numbers."""
    return " ".join(_CARRIED.findall(" ".join(text.split())))
