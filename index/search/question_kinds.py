"""What a question asks for (a number, a time, a person, a place) and whether a sentence has one.

Rules, not a tagger: no named-entity model installs and loads offline here, and these few
patterns are what separate "the sentence about the ferry" from "the sentence that says how many
died on it". A sentence supplies the kind only with words the question does not already hold:
"When did Tesla die?" is not answered by the word "Tesla".
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["Kind", "expected", "supplies"]

Kind = Literal["number", "time", "person", "place", "quote"]

_ASKS: list[tuple[re.Pattern[str], Kind]] = [
    (
        re.compile(
            r"\bhow\s+(?:many|much|long|old|far|big|large|tall|high|often|fast|deep|wide|heavy)\b"
            r"|\bwhat\s+(?:percentage|percent|number|amount|age|score|sum|total|price|cost)\b",
            re.I,
        ),
        "number",
    ),
    (
        re.compile(
            r"^\s*when\b|\bwhat\s+(?:year|date|day|time|month|century|decade)\b"
            r"|\bin\s+(?:which|what)\s+(?:year|month|decade|century)\b|\bwhen\s+(?:did|was|is|will|were|does|do)\b",
            re.I,
        ),
        "time",
    ),
    (
        re.compile(r"^\s*(?:who|whom|whose)\b|\bwho\s+(?:is|was|are|were|did|has|had)\b", re.I),
        "person",
    ),
    (
        re.compile(
            r"^\s*where\b|\bwhere\s+(?:is|was|are|were|did|does|do|will)\b"
            r"|\b(?:in|from|to)\s+(?:which|what)\s+(?:country|city|state|town|region|place|province)\b"
            r"|\bwhat\s+(?:country|city|state|town|region|place|province|continent)\b",
            re.I,
        ),
        "place",
    ),
]

# "What did the mayor call it?", "What does Bondi say?": news answers these with a quotation.
_ASKS.append(
    (
        re.compile(
            r"\bwhat\s+(?:did|does|do|has|have|had|will|would)\s+.{1,60}?\s+"
            r"(?:say|said|call|called|describe|tell|told|claim|write|wrote|warn|add)\b",
            re.I,
        ),
        "quote",
    )
)
_QUOTE = re.compile(r"[“”\"]")

_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred hundreds thousand thousands million millions billion billions trillion dozen dozens "
    "half quarter percent"
).split()
_NUMBER = re.compile(r"\d|\b(?:" + "|".join(_NUMBER_WORDS) + r")\b", re.I)
_COUNT = re.compile(r"\bhow\s+(?:many|much)\b", re.I)
# A year as a sentence dates something: "in 2014", "since the 1990s", "March 3, 2021" (but
# "$1800", "1800 residents" or "fell by 1900" are amounts).
_YEAR = re.compile(
    r"\b(?:(?:in|since|from|until|till|before|after|during)(?:\s+the)?\s+|"
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+(?:[0-9]{1,2},?\s+)?)"
    r"(?:1[5-9][0-9]{2}|20[0-9]{2})s?\b",
    re.I,
)
_MONTHS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
).split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_TIME = re.compile(
    r"\b(?:1[0-9]{3}|20[0-9]{2})s?\b|\b(?:"
    + "|".join(_MONTHS + _DAYS)
    + r")\b|\b(?:yesterday|today|tomorrow|tonight|ago|century|centuries|decade|decades|"
    r"weeks?|months?|years?|morning|afternoon|evening|night|a\.m\.|p\.m\.|since|until|"
    r"earlier|later|recently|last|next)\b",
    re.I,
)
# A capitalized word, not at the start of the sentence (where every word is capitalized).
_NAME = re.compile(r"(?<=[a-z,;:)\"”'’]\s)(?:[A-Z][a-z'’.-]+|[A-Z]{2,})(?:\s+[A-Z][a-z'’.-]+)*")
_PLACE_LEAD = re.compile(
    r"\b(?:in|at|near|from|to|outside|inside|across|into|toward|towards|of)\s+(?:the\s+)?"
    r"([A-Z][\w'’.-]+(?:\s+[A-Z][\w'’.-]+)*)"
)
_WORD = re.compile(r"\w+")


def expected(question: str) -> Kind | None:
    """The kind of thing the question asks for, when its words say so."""
    for pattern, kind in _ASKS:
        if pattern.search(question):
            return kind
    return None


def _new(found: str, asked: set[str]) -> bool:
    """Whether a matched phrase holds a word the question does not."""
    return any(w.casefold() not in asked for w in _WORD.findall(found))


def supplies(sentence: str, kind: Kind, question: str) -> bool:
    """Whether the sentence holds a thing of this kind that the question does not name."""
    asked = {w.casefold() for w in _WORD.findall(question)}
    if kind == "number":
        if _COUNT.search(question):  # a year is not how many or how much: "in 2014"
            return any(_new(m.group(0), asked) for m in _NUMBER.finditer(_YEAR.sub(" ", sentence)))
        pattern = _NUMBER
    elif kind == "time":
        pattern = _TIME
    elif kind == "person":
        pattern = _NAME
    elif kind == "quote":
        return bool(_QUOTE.search(sentence))
    else:
        return any(_new(m.group(1), asked) for m in _PLACE_LEAD.finditer(sentence))
    return any(_new(m.group(0), asked) for m in pattern.finditer(sentence))
