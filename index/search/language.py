"""How a question is read: in which language, and so which rules apply to it.

A question is read in a language its collection's articles are written in (their languages are
stored, text/languages.py) when it is written in one of them: both channels then search it,
its words analysed as those articles' words are. A question in a language no article is
written in shares only names and numbers with them, so only those reach the keyword side and
the embedding carries the rest ("foreign"). The rules written for English (spelling, question
kinds) apply to a question read as English alone.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from index.text import (
    ENGLISH,
    ENGLISH_QUESTION_WORDS,
    WIDELY_WRITTEN,
    language_script,
    likelihoods,
    rank_among,
    script_of,
)

__all__ = ["Reading", "is_english", "names_and_numbers", "read_question"]

_WORD = re.compile(r"[^\W\d_]+")
# Below this probability the identifier is not sure enough to call a question foreign.
_SURE = 0.7
# From this many words outside its names, a question says enough of its language to be read
# as none of the articles' by the chance of all other languages together.
_WEIGHED_WORDS = 3


@dataclass(frozen=True)
class Reading:
    """How a question is read: the language its words are analysed in, whether the articles
    are written in it (`native`; else only its names and numbers are searched), and the
    language it was identified as (`asked_in`: `language` when native)."""

    language: str
    native: bool
    asked_in: str

    @property
    def english(self) -> bool:
        """Whether the rules written for English apply."""
        return self.native and self.language == ENGLISH


def read_question(question: str, languages: dict[str, int]) -> Reading:
    """How to read `question` asked of articles in `languages` (articles per language)."""
    if not languages:
        languages = {ENGLISH: 1}
    main = max(sorted(languages), key=lambda lang: languages[lang])
    if ENGLISH in languages and _has_english_words(question):
        return Reading(ENGLISH, True, ENGLISH)
    return _read(question, tuple(sorted(languages)), main)


@functools.lru_cache(maxsize=4096)
def _read(question: str, present: tuple[str, ...], main: str) -> Reading:
    chances = likelihoods(question, WIDELY_WRITTEN.union(present))
    language = max(chances, key=chances.__getitem__) if chances else main
    if language in present:
        return Reading(language, True, language)
    script = script_of(question)
    # Too short to be sure it is in none of the articles' languages: most likely one of them
    # written in its script. From `_WEIGHED_WORDS` words outside its names on, what is weighed
    # is the chance of every other language together, not the likeliest one's alone: kin the
    # identifier splits a question between (Indonesian and Malay, Danish and Norwegian) are
    # each unsure where together they are sure; a few keywords around names ("Kuranyi goals
    # Schalke") say too little either way. XQuAD's questions asked of articles in another
    # language and read as the articles' (of 1,190 a language): Turkish of English articles
    # 18 -> 9, German of English 25 -> 13, English of German 21 -> 2; Indonesian of English
    # (tools/bench/small_server.py's 10) 6 -> 0; at the cost of 2 Turkish questions of Turkish
    # articles and 1 Vietnamese of Vietnamese read as foreign (searched by the embedding and
    # their names and numbers).
    elsewhere = chances.get(language, 0.0)
    if len(_outside_names(question)) >= _WEIGHED_WORDS:
        elsewhere = 1.0 - sum(chances.get(lang, 0.0) for lang in present)
    if elsewhere < _SURE:
        for candidate in rank_among(question, present):
            if language_script(candidate) == script:
                return Reading(candidate, True, candidate)
    return Reading(main, False, language)


def _has_english_words(text: str) -> bool:
    """Whether the text holds an English question word outside its names, or is too short
    to tell (two words or fewer, in the Latin alphabet)."""
    words = [w.casefold() for w in _WORD.findall(text)]
    if script_of(text) != "LATIN":
        return False
    return len(words) < 2 or bool(ENGLISH_QUESTION_WORDS.intersection(_outside_names(text)))


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
    return read_question(text, {ENGLISH: 1}).native


# A word that carries across languages: a name (capitalized, not the first word) or a number.
_CARRIED = re.compile(r"(?<=\s)[^\W\d_]*[A-Z][\w'’-]*|\w*\d\w*")


def names_and_numbers(text: str) -> str:
    """The words of a text that read the same in any language: names and numbers."""
    return " ".join(_CARRIED.findall(" ".join(text.split())))
