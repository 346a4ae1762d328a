"""Sentence splitting (pysbd), kept in one place so the splitter can be swapped."""

from __future__ import annotations

import functools
import re

import pysbd

__all__ = ["split_sentences"]

# pysbd is slow on very long inputs; cut at blank-ish boundaries first so a 100,000-character
# paragraph without punctuation cannot stall an add.
_MAX_SEGMENT = 5_000


@functools.lru_cache(maxsize=1)
def _segmenter() -> pysbd.Segmenter:
    return pysbd.Segmenter(language="en", clean=False, char_span=False)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences, keeping their original wording.

    Each line is split on its own: the lines of a paragraph are a list's items or a table's
    rows, and no sentence runs from one into the next."""
    return [s for line in text.split("\n") for s in _split_line(line)]


def _split_line(text: str) -> list[str]:
    text = text.strip()
    if not text:
        return []
    out: list[str] = []
    start = 0
    while len(text) - start > _MAX_SEGMENT:
        # Cut after the last sentence end (else the last space) before the limit, so that no
        # word is cut in two; only a single "word" longer than the limit is cut where it falls.
        end = start + _MAX_SEGMENT
        cut = max(text.rfind(". ", start, end), text.rfind("? ", start, end))
        cut = max(cut, text.rfind("! ", start, end))
        cut = cut + 1 if cut > start else text.rfind(" ", start, end)
        if cut <= start:
            cut = end
        out.extend(_segment(text[start:cut]))
        start = cut
    return out + _segment(text[start:])


def _segment(text: str) -> list[str]:
    sentences = [s.strip() for s in _segmenter().segment(text)]
    return [s for s in sentences if s and re.search(r"\w", s)]
