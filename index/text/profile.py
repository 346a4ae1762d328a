"""A language's profile: everything the project knows of a language, asked in one place.

Ingest, the keyword indexes, question reading, ranking, relevance, quotes and the Discord
renderer ask a `Profile` rather than keep a table of languages or scripts of their own: how
its words are analysed (analysis.py), where its sentences end (sentences.py), whether it is
read in pairs of characters, its script and direction (scripts.py), whether a question in it
asks for a number (question_words.py), and whether the rules written for English (stop
words, word forms, spelling, question kinds) apply.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from index.text import question_words
from index.text.analysis import ENGLISH, Analyzer, analyzer, reads_in_pairs
from index.text.scripts import writing_system
from index.text.sentences import split_sentences

__all__ = ["Profile", "profile"]


@dataclass(frozen=True)
class Profile:
    """One language (ISO 639-1), as every part of the project reads it."""

    language: str
    script: str
    right_to_left: bool
    pairs: bool  # its words are read as overlapping pairs of characters
    english: bool  # the rules written for English apply
    words: Analyzer = field(repr=False, compare=False)

    def sentences(self, text: str) -> tuple[str, ...]:
        """The text's sentences, as ranking, the relevance rule and quotes all read them."""
        return _sentences(text, self.language)

    def asks_for(self, question: str) -> question_words.Asked | None:
        """What `question`, written in this language, asks for: a number (how many, when), a
        person (who), a place (where); None where its words do not say or are not known."""
        return question_words.asks_for(question, self.language)

    @staticmethod
    def supplies(sentence: str, kind: question_words.Asked, question: str) -> bool:
        """Whether `sentence` holds what `question` asks for (`kind`) and does not hold itself:
        a number (in any script's digits), or a name."""
        return question_words.supplies(sentence, kind, question)


# A question reads the same top passages as the questions before it; splitting is cheap, but
# no work is done twice.
@functools.lru_cache(maxsize=8192)
def _sentences(text: str, language: str) -> tuple[str, ...]:
    return tuple(split_sentences(text, language))


@functools.lru_cache(maxsize=256)
def profile(language: str | None) -> Profile:
    """The profile of `language`; None (a text too short to tell) is read as English."""
    code = language or ENGLISH
    system = writing_system(code)
    return Profile(
        language=code,
        script=system.name,
        right_to_left=system.right_to_left,
        pairs=reads_in_pairs(code),
        english=code == ENGLISH,
        words=analyzer(code),
    )
