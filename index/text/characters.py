"""What a text is made of, kept as the author wrote it: line ends, spaces and the few
invisible characters taken out before anything is stored, split, embedded or quoted.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize"]

# Characters that show nothing and can disguise text: Unicode's format characters (category Cf:
# zero-width spaces and joiners, bidirectional overrides, the byte-order mark, tags) and the
# default-ignorable ones (variation selectors, the Hangul fillers used as "blank" names).
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")  # a lone half of a pair: undecodable bytes, not text
_LINE_BREAK = re.compile("\r\n?|[\x85\u2028]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SPACES = re.compile(r"[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]+")


def normalize(text: str) -> str:
    """NFC, no invisible or control characters, one space between words, \\n line ends."""
    text = _LINE_BREAK.sub("\n", text).replace("\u2029", "\n\n")
    # Invisibles go before NFC: removing one can bring together what NFC would compose.
    text = _INVISIBLE.sub("", _SURROGATE.sub("\ufffd", text))
    text = unicodedata.normalize("NFC", text)
    text = _CONTROL.sub(" ", text)
    lines = [_SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(lines)
