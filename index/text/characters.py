"""What a text is made of, kept as the author wrote it: line ends and spaces made plain, NFC,
and a short, named list of characters taken out before anything is stored, split, embedded or
quoted.

Invisible characters are spelling in many scripts and are kept: the zero-width non-joiner
writes Persian ("حرفه‌ای" is not "حرفهای") and Hindi and Bengali half-forms, the zero-width
joiner binds emoji sequences (a family of three is one emoji) and Indic conjuncts, variation
selectors choose a glyph (a heart as emoji), tag characters spell subdivision flags, and the
zero-width space marks word breaks in Thai, Khmer and Burmese. Only what harms is removed
(`REMOVED`, each with its reason). Keyword analysis reads words with joiners and non-joiners
as one (analysis.py), so a question typed with or without them finds the same words.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BIDIRECTIONAL", "REMOVED", "normalize"]

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
    # Hangul fillers that draw nothing: no modern text needs them (syllables are composed), and
    # they pass a blank for a title or a name.
    **dict.fromkeys("\u3164\uffa0", "Hangul filler"),
}
_REMOVED = re.compile("[" + "".join(REMOVED) + "]")
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone half of a pair: undecodable bytes, not text
_LINE_BREAK = re.compile("\r\n?|[\x85\u2028]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")


def normalize(text: str) -> str:
    """NFC, without the characters of `REMOVED` or control characters, one space between
    words, \\n line ends; every other character as written."""
    text = _LINE_BREAK.sub("\n", text).replace("\u2029", "\n\n")
    # Removed before NFC: taking one out can bring together what NFC would compose.
    text = _REMOVED.sub("", _SURROGATE.sub("\ufffd", text))
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub(" ", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(lines)
