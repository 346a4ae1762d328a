"""Right-to-left text among left-to-right: directional isolates, so that a source marker or a
line's punctuation beside an Arabic or Hebrew sentence keeps its place when Discord shows it."""

from __future__ import annotations

from index.text import is_right_to_left

__all__ = ["ISOLATES", "is_right_to_left", "isolated"]

# First-strong isolate ... pop directional isolate: the text between takes its own direction
# and sits as one block in the line, so "[1]" after an Arabic sentence stays after it.
_ISOLATE, _POP = "\u2068", "\u2069"
ISOLATES = len(_ISOLATE + _POP)  # the characters isolating a text adds


def isolated(text: str) -> str:
    """Text holding right-to-left letters inside directional isolates; other text as it is."""
    return f"{_ISOLATE}{text}{_POP}" if is_right_to_left(text) else text
