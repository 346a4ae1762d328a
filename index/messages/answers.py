"""An answer in the reader's locale: the core's own sentence (a decline) in their words; the
articles' quotes and everything else as they are."""

from __future__ import annotations

import dataclasses

from index.messages.catalogue import translate
from index.records import Answer

__all__ = ["in_locale"]


def in_locale(answer: Answer, locale: str) -> Answer:
    """`answer` with its text translated where it is the bot's own: a decline, or the line
    that opens a list of articles to choose from (quotes are never the bot's words, and a
    catalogue holds no article's sentence)."""
    if answer.abstained:
        return dataclasses.replace(answer, answer=translate(locale, answer.answer.strip()))
    from index.answers.summary_answer import WHICH_ARTICLE  # the core's own opening line

    first, newline, rest = answer.answer.partition("\n")
    if first != WHICH_ARTICLE:
        return answer
    return dataclasses.replace(answer, answer=translate(locale, first) + newline + rest)
