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
    """Split text into sentences, keeping their original wording."""
    text = text.strip()
    if not text:
        return []
    if len(text) > _MAX_SEGMENT:
        out: list[str] = []
        for start in range(0, len(text), _MAX_SEGMENT):
            out.extend(split_sentences(text[start : start + _MAX_SEGMENT]))
        return out
    sentences = [s.strip() for s in _segmenter().segment(text)]
    return [s for s in sentences if s and re.search(r"\w", s)]
