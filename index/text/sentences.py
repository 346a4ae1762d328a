"""Sentence splitting, per language, kept in one place so the splitter can be swapped.

pysbd's rules for the 23 languages it has (abbreviations, numbers, quotations), English's for a
text of unknown language; for the others, a sentence ends at a full stop, question or
exclamation mark of any script (Latin, CJK's 。！？, Devanagari's ।, Arabic's ؟, Armenian's ։,
Ethiopic's ።...) followed by a space, or at once after a CJK one; Thai and Lao, written without
full stops, end a sentence at a space.
"""

from __future__ import annotations

import functools
import re

import pysbd

__all__ = ["split_sentences"]

# pysbd is slow on very long inputs; cut at blank-ish boundaries first so a 100,000-character
# paragraph without punctuation cannot stall an add.
_MAX_SEGMENT = 5_000


_PYSBD = frozenset("am ar bg da de el en es fa fr hi hy it ja kk mr my nl pl ru sk ur zh".split())
_SPACED_SENTENCES = frozenset({"th", "lo"})
# A sentence end of any script: after one of these and a space, or at once after a CJK one.
_END = re.compile(r"(?<=[.!?։።؟۔।॥။])\s+|(?<=[。！？])\s*")


@functools.lru_cache(maxsize=32)
def _segmenter(language: str) -> pysbd.Segmenter:
    return pysbd.Segmenter(language=language, clean=False, char_span=False)


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Split text into sentences, keeping their original wording; `language` is the text's
    (ISO 639-1), None for English's rules.

    Each line is split on its own: the lines of a paragraph are a list's items or a table's
    rows, and no sentence runs from one into the next."""
    language = language or "en"
    return [s for line in text.split("\n") for s in _split_line(line, language)]


def _split_line(text: str, language: str) -> list[str]:
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
        out.extend(_segment(text[start:cut], language))
        start = cut
    return out + _segment(text[start:], language)


def _segment(text: str, language: str) -> list[str]:
    if language in _PYSBD:
        sentences = _segmenter(language).segment(text)
    elif language in _SPACED_SENTENCES:
        sentences = text.split()
    else:
        sentences = _END.split(text)
    stripped = (s.strip() for s in sentences)
    return [s for s in stripped if s and re.search(r"\w", s)]
