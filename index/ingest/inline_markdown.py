"""Markdown's links and emphasis taken out of a line, its text kept, in time linear in the line.

The patterns these replace (`!?\\[([^\\]]*)\\]\\([^)]*\\)` and
`(\\*\\*|__|\\*|`)(?=\\S)(.+?)(?<=\\S)\\1`) were tried again from every bracket or star that
opened nothing, each time reading on to the line's end: a pasted line of 20,000 "[" or of
"`word " took seconds. Here each is read once, with what the patterns would have matched:
the same text comes out for every line.
"""

from __future__ import annotations

import bisect

__all__ = ["strip_emphasis", "strip_links"]


def strip_links(line: str) -> str:
    """Each `[text](target)` and `![text](target)` as its text: the first "]" after a "[",
    then "(", then the first ")" after it."""
    out: list[str] = []
    done = 0
    opening = line.find("[")
    while opening >= 0:
        closing = line.find("]", opening + 1)
        if closing < 0:
            break  # no "]" after this "[", so none after any later one either
        if not line.startswith("(", closing + 1):
            # Every "[" before this "]" would find the same "]": none of them is a link.
            opening = line.find("[", closing + 1)
            continue
        target_end = line.find(")", closing + 2)
        if target_end < 0:
            break  # no ")" after this "](", so none after a later one either
        start = opening - 1 if opening > done and line[opening - 1] == "!" else opening
        out += [line[done:start], line[opening + 1 : closing]]
        done = target_end + 1
        opening = line.find("[", done)
    out.append(line[done:])
    return "".join(out)


# The delimiters that open emphasis or code, longest first where they share a character.
_OPENERS = {"*": ("**", "*"), "_": ("__",), "`": ("`",)}


def strip_emphasis(line: str) -> str:
    """Each `**text**`, `__text__`, `*text*` and `` `text` `` as its text, read as the
    leftmost first and the shortest text: a delimiter, then a character that is not a space,
    up to the first same delimiter after a character that is not a space. Emphasis does not
    run over a line break."""
    if "\n" in line:
        return "\n".join(strip_emphasis(part) for part in line.split("\n"))
    closers = {d: _closing_places(line, d) for d in ("**", "__", "*", "`")}
    # Where each opening character is next found, looked up again only once passed: a find
    # from every star of the line for a character it lacks would read the line each time.
    ahead = {c: line.find(c) for c in _OPENERS}
    out: list[str] = []
    done = at = 0
    while at < len(line):
        for c, place in ahead.items():
            if 0 <= place < at:
                ahead[c] = line.find(c, at)
        found = min((i for i in ahead.values() if i >= 0), default=-1)
        if found < 0:
            break
        match = _emphasis_at(line, found, closers)
        if match is None:
            at = found + 1
            continue
        text, text_end, end = match
        out += [line[done:found], line[text:text_end]]
        done = at = end
    out.append(line[done:])
    return "".join(out)


def _closing_places(line: str, delimiter: str) -> list[int]:
    """Where `delimiter` stands after a character that is not a space, in order."""
    places = []
    at = line.find(delimiter, 1)
    while at >= 0:
        if not line[at - 1].isspace():
            places.append(at)
        at = line.find(delimiter, at + 1)
    return places


def _emphasis_at(
    line: str, start: int, closers: dict[str, list[int]]
) -> tuple[int, int, int] | None:
    """Where the text of emphasis opened at `start` begins and ends, and where the emphasis
    ends; None where none opens there."""
    for delimiter in _OPENERS[line[start]]:
        if not line.startswith(delimiter, start):
            continue
        text = start + len(delimiter)
        if text >= len(line) or line[text].isspace():
            continue
        places = closers[delimiter]
        i = bisect.bisect_left(places, text + 1)
        if i < len(places):
            return text, places[i], places[i] + len(delimiter)
    return None
