"""Right-to-left text among left-to-right: directional isolates, so that a source marker or a
line's punctuation beside an Arabic or Hebrew sentence keeps its place when Discord shows it."""

from __future__ import annotations

import re

__all__ = ["ISOLATES", "is_right_to_left", "isolated"]

# Right-to-left letters (Hebrew, Arabic, Syriac, Thaana, N'Ko and their presentation forms).
_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
# First-strong isolate ... pop directional isolate: the text between takes its own direction
# and sits as one block in the line, so "[1]" after an Arabic sentence stays after it.
_ISOLATE, _POP = "\u2068", "\u2069"
ISOLATES = len(_ISOLATE + _POP)  # the characters isolating a text adds


def is_right_to_left(text: str) -> bool:
    return _RTL.search(text) is not None


def isolated(text: str) -> str:
    """Text holding right-to-left letters inside directional isolates; other text as it is."""
    return f"{_ISOLATE}{text}{_POP}" if is_right_to_left(text) else text
