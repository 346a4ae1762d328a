"""Misspelt question words, corrected to the nearest word the articles use (pyspellchecker's
English word list tells a typo from a real word; the only module that imports it).

A question typed in a hurry ("Who accused him of accesory to murder?") holds a word that no
passage holds; the keyword side would weigh it as the rarest word of all, and the relevance test
would decline an answer the articles have. A lower-case word of the question that is neither in
the articles nor an English word is replaced by the articles' most common word one edit away
(a letter deleted, inserted, replaced, or two swapped).

A real English word stays as typed even when the articles lack it ("facet" is not a typo of
"fact"), and so do names: a capitalized word the articles lack is what tells the bot that a
story is not there. A name typed in lower case cannot be told from a typo, and is treated as one
when the articles hold a word one edit away.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Callable
from typing import Any

from index.ingest.terms import terms_of_words

__all__ = ["corrected", "load_word_list"]

# Shorter words have too many words one letter away to guess which was meant.
MIN_LENGTH = 4
# Past this length a word is no typo of a word in use, and its edits would only cost time.
MAX_LENGTH = 24
# A question with more misspellings than this is corrected in its first few only: each costs
# about 55 candidate words a letter, looked up together.
MAX_CORRECTIONS = 3
# At least this share of a question's lower-case words are English for it to be respelt.
ENGLISH_SHARE = 0.5
# A lower-case word on its own: not part of a name, a number or a contraction ("couldn't").
_WORD = re.compile(r"(?<![\w'’])[a-z]+(?![\w'’])")

# The document frequencies of the given keyword terms; a term in no passage is left out.
Frequencies = Callable[[list[str]], dict[str, int]]


@functools.lru_cache(maxsize=1)
def _english() -> Any:
    from spellchecker import SpellChecker

    return SpellChecker(language="en", distance=1).word_frequency


def load_word_list() -> None:
    """Read the English word list now (about 0.3 s, 160,000 words) rather than in a question."""
    _english()


def _edits(word: str) -> set[str]:
    """The words one deleted, inserted or replaced letter, or one swap, away."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    letters = string.ascii_lowercase
    deleted = {a + b[1:] for a, b in splits if b}
    swapped = {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
    replaced = {a + c + b[1:] for a, b in splits if b for c in letters}
    inserted = {a + c + b for a, b in splits for c in letters}
    return (deleted | swapped | replaced | inserted) - {word}


def _misspelt(question: str, frequencies: Frequencies) -> list[str]:
    lower = _WORD.findall(question)
    words = [w for w in dict.fromkeys(lower) if MIN_LENGTH <= len(w) <= MAX_LENGTH]
    terms = dict(zip(words, terms_of_words(words), strict=True))
    known = frequencies(sorted({t for t in terms.values() if t}))
    unknown = [w for w in words if terms[w] and terms[w] not in known]
    if not unknown:  # most questions: the word list is not even read
        return []
    english = _english()
    # Typos are a few words among English ones; where most words are not English the question
    # is in another language (taken for English because of an English name in it), not misspelt.
    if sum(w in english for w in lower) < ENGLISH_SHARE * len(lower):
        return []
    return [w for w in unknown if w not in english][:MAX_CORRECTIONS]


def _spellings(word: str) -> dict[str, str]:
    """The keyword terms one edit away from `word`, each with a spelling that makes it; none
    when a stopword is as near ("waht" is "what", not the articles' "wait")."""
    english = _english()
    # Of the spellings that share a stem, an English word reads best in the corrected question.
    candidates = sorted(_edits(word), key=lambda c: (c not in english, c))
    stems: dict[str, str] = {}
    for candidate, term in zip(candidates, terms_of_words(candidates), strict=True):
        if term is None:
            return {}
        stems.setdefault(term, candidate)
    return stems


def corrected(question: str, frequencies: Frequencies) -> str:
    """The question with each misspelt lower-case word replaced by the word one edit away that
    the most passages hold, where a passage holds one."""
    spellings = {word: _spellings(word) for word in _misspelt(question, frequencies)}
    if not spellings:
        return question
    # One lookup for every candidate of every word: one query on PostgreSQL.
    found = frequencies(sorted({t for stems in spellings.values() for t in stems}))
    fixes = {}
    for word, stems in spellings.items():
        held = sorted(t for t in stems if t in found)
        if held:
            fixes[word] = stems[max(held, key=lambda t: found[t])]
    return _WORD.sub(lambda m: fixes.get(m.group(0), m.group(0)), question)
