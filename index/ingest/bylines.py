"""Author names out of the byline a page gives: without "By", dates and roles, joined for reading.

Pages put more than names in their author fields: "By Jeff Foust", "Jeff Foust Monday; November",
"Jane Doe, Staff Writer | Updated 10:42 a.m. EST". A citation shows the names alone.
"""

from __future__ import annotations

import re

__all__ = ["clean_author"]

_PARTS = re.compile(r"\s*(?:[;|,&/•·]|\band\b|\bwith\b)\s*", re.IGNORECASE)
_BY = re.compile(r"^(?:written\s+|words\s+|reporting\s+)?by\b[:\s]*", re.IGNORECASE)
_DATE_WORDS = {
    *"monday tuesday wednesday thursday friday saturday sunday".split(),
    *"mon tue tues wed thu thur thurs fri sat sun".split(),
    *"january february march april may june july august september october november".split(),
    *"december jan feb mar apr jun jul aug sep sept oct nov dec".split(),
    *"updated published posted last modified am pm a.m. p.m. est edt cst cdt pst pdt".split(),
    *"gmt bst cet cest utc ist today yesterday ago min mins read".split(),
}
_ROLES = {
    *"reporter correspondent editor writer staff contributor columnist journalist".split(),
    *"photographer producer author senior chief political science special".split(),
}
_CONNECTORS = {"on", "at", "by", "in", "-", "–", "—", "|"}


def _date_like(word: str) -> bool:
    key = word.casefold().strip(".,:;()")
    return key in _DATE_WORDS or bool(re.fullmatch(r"[\d:./-]+(st|nd|rd|th)?", key))


def _name(part: str) -> str | None:
    """The name in one part of a byline, or None when the part holds no name."""
    words = _BY.sub("", part.strip()).split()
    if not words or all(_date_like(w) for w in words):
        return None
    # A name does not go on past a date word: "Jeff Foust Monday" (but "April Ryan" is a name).
    cut = next((i for i, w in enumerate(words) if i and _date_like(w)), len(words))
    words = words[:cut]
    while words and words[-1].casefold() in _CONNECTORS:
        words.pop()
    if not words or all(_date_like(w) for w in words):  # "Updated" before the time
        return None
    if any(w.casefold().strip(".,") in _ROLES for w in words):
        return None
    if any("@" in w or "://" in w or w.startswith("www.") for w in words):
        return None
    name = " ".join(words).strip(" .,:;-–—")
    return name if re.search(r"[^\W\d_]{2}", name) else None


def _key(name: str) -> str:
    return re.sub(r"^the\s+", "", name.casefold())


def clean_author(byline: str | None, site: str | None = None) -> str | None:
    """The names in a byline, "A", "A and B" or "A, B and C"; None when it names nobody.

    The site's own name in the byline ("..., The Valley Courier") is not an author's."""
    if not byline:
        return None
    names: list[str] = []
    seen = {_key(site)} if site else set()
    for part in _PARTS.split(byline):
        name = _name(part)
        if name and _key(name) not in seen:
            names.append(name)
            seen.add(_key(name))
    if not names:
        return None
    if len(names) == 1:
        return names[0][:200]
    return (", ".join(names[:-1]) + " and " + names[-1])[:200]
