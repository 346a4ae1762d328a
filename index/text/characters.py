"""What a text is made of, kept as the author wrote it: NFC, and a short, named list of
characters taken out before anything is stored, split, embedded or quoted.

Invisible characters are spelling in many scripts and are kept: the zero-width non-joiner
writes Persian ("حرفه‌ای" is not "حرفهای") and Hindi and Bengali half-forms, the zero-width
joiner binds emoji sequences (a family of three is one emoji) and Indic conjuncts, variation
selectors choose a glyph (a heart as emoji), tag characters spell subdivision flags, and the
zero-width space marks word breaks in Thai, Khmer and Burmese. So are the spaces that say
something: the no-break spaces (U+00A0; U+202F, French's before "?" and "»"; U+2007, a figure's
width) and the ideographic space (U+3000) of Chinese and Japanese. Keyword analysis reads words
with joiners and non-joiners as one, and every space as a space (analysis.py), so a question
typed with or without them finds the same words.

What is changed, and why:
- `REMOVED`, each with its reason;
- control characters become spaces, and a lone surrogate (undecodable bytes) U+FFFD;
- line ends become "\n" (the line and paragraph separators U+2028 and U+2029 "\n" and
  "\n\n"): a paragraph is text between blank lines, and its lines a list's items;
- a run of the spaces that only lay a page out (tabs, en, em, thin and hair spaces, and the
  space itself) becomes one space, and beside a kept space gives way to it: how wide a page
  set the space between two words is not the author's text, and the same words found on two
  pages are the same article (content hashes);
- each line's spaces at its start and end are removed, kept ones included (a Japanese
  paragraph's ideographic space is an indent, not text).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BIDIRECTIONAL", "KEPT_SPACES", "REMOVED", "normalize"]

_EMBEDDINGS_AND_OVERRIDES = "\u202a\u202b\u202c\u202d\u202e"
_ISOLATES = "\u2066\u2067\u2068\u2069"
# The controls that reorder the text after them (a message escapes them: errors.shown).
BIDIRECTIONAL = frozenset(_EMBEDDINGS_AND_OVERRIDES + _ISOLATES)

# What is removed, and why:
REMOVED = {
    # The soft hyphen: an invisible hint where a word may break at a line's end, left in text
    # copied from pages that set it; inside a stored word it hides the word from search.
    "\u00ad": "soft hyphen",
    # Bidirectional embeddings, overrides and isolates (and the pops that end them): unbalanced
    # in a quote, they reorder the text after them, the citation marker and the rest of a
    # Discord message with it, and an override can make text read as something else. Discord's
    # renderer isolates right-to-left quotes itself (bot/direction.py).
    **dict.fromkeys(_EMBEDDINGS_AND_OVERRIDES, "bidirectional embedding or override"),
    **dict.fromkeys(_ISOLATES, "bidirectional isolate"),
    # The byte-order mark: the encoding's signature at a file's start, not text.
    "\ufeff": "byte-order mark",
    # Hangul fillers that draw nothing (the compatibility and half-width fillers, and the
    # leading and vowel fillers of conjoining jamo): no modern text needs them (syllables are
    # composed), and as letters they pass a blank for a title, a name or a question.
    **dict.fromkeys("\u3164\uffa0\u115f\u1160", "Hangul filler"),
}
_REMOVED = re.compile("[" + "".join(REMOVED) + "]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone half of a pair: undecodable bytes, not text
_LINE_BREAK = re.compile("\r\n?|[\x85\u2028]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Spaces that lay a page out, and those an author writes (kept).
_LAYOUT_SPACES = " \t\u1680\u2000-\u2006\u2008-\u200a\u205f"
KEPT_SPACES = _KEPT_SPACES = "\u00a0\u2007\u202f\u3000"
_SPACES = re.compile(f"[{_LAYOUT_SPACES}{_KEPT_SPACES}]+")
_KEPT = re.compile(f"[^{_KEPT_SPACES}]+")


def _spaced(run: re.Match[str]) -> str:
    """A run of spaces: its kept spaces as written, else one space."""
    return _KEPT.sub("", run.group()) or " "


def normalize(text: str) -> str:
    """NFC, without the characters of `REMOVED` or control characters, one space between
    words where the page laid them out, \\n line ends; every other character as written."""
    text = _LINE_BREAK.sub("\n", text).replace("\u2029", "\n\n")
    # Removed before NFC: taking one out can bring together what NFC would compose.
    text = _REMOVED.sub("", _SURROGATE.sub("\ufffd", text))
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub(" ", text)
    lines = [_SPACES.sub(_spaced, line).strip() for line in text.split("\n")]
    return "\n".join(lines)
