"""Writing systems: which script a text or a language is written in, which scripts run their
words together, and which are written right to left. The one table of scripts in the project.
"""

from __future__ import annotations

import re
import unicodedata

import regex

__all__ = [
    "READ_IN_PAIRS",
    "RIGHT_TO_LEFT_SCRIPTS",
    "UNSPACED",
    "is_right_to_left",
    "language_script",
    "script_of",
]

# The script each language is written in, where it is not the Latin alphabet (py3langid's
# languages); a question is read in a language of its own script only.
_SCRIPTS = {
    **dict.fromkeys("ru uk bg sr mk be kk ky mn tt".split(), "CYRILLIC"),
    **dict.fromkeys("ar fa ur ps ug ku".split(), "ARABIC"),
    **dict.fromkeys("he yi".split(), "HEBREW"),
    **dict.fromkeys("hi mr ne sa".split(), "DEVANAGARI"),
    **dict.fromkeys("bn as".split(), "BENGALI"),
    **dict.fromkeys("zh ja".split(), "CJK"),
    "el": "GREEK",
    "ko": "HANGUL",
    "th": "THAI",
    "lo": "LAO",
    "km": "KHMER",
    "my": "MYANMAR",
    "ka": "GEORGIAN",
    "hy": "ARMENIAN",
    "am": "ETHIOPIC",
    "si": "SINHALA",
    "ta": "TAMIL",
    "te": "TELUGU",
    "kn": "KANNADA",
    "ml": "MALAYALAM",
    "gu": "GUJARATI",
    "pa": "GURMUKHI",
    "or": "ORIYA",
    "dv": "THAANA",
}
# Unicode names whose first word differs within one writing system.
_SAME_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK", "FULLWIDTH": "LATIN"}

# Scripts written without spaces between words (Han, Hiragana, Katakana, Thai, Lao, Khmer,
# Myanmar): there a word's edges are not spaces. Hangul is spaced, but its words run a stem and
# its endings together, so keyword analysis reads it in pairs of characters too (analysis.py).
_UNSPACED_LETTERS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}ー"
UNSPACED = regex.compile(f"[{_UNSPACED_LETTERS}]")
# A run of the scripts keyword analysis reads in pairs of characters: those, and Hangul.
READ_IN_PAIRS = regex.compile(rf"[{_UNSPACED_LETTERS}\p{{Hangul}}]+")

# Right-to-left letters (Hebrew, Arabic, Syriac, Thaana, N'Ko and their presentation forms),
# and those scripts by the names `script_of` gives them.
RIGHT_TO_LEFT_SCRIPTS = frozenset({"ARABIC", "HEBREW", "THAANA", "SYRIAC", "NKO"})
_RTL = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")


def _script(char: str) -> str:
    name = unicodedata.name(char, "").split(" ", 1)[0]
    return _SAME_SCRIPT.get(name, name)


def script_of(text: str) -> str:
    """The script most of the text's letters are written in ("LATIN", "CJK", "ARABIC"...)."""
    counts: dict[str, int] = {}
    for char in text:
        if char.isalpha():
            script = _script(char)
            counts[script] = counts.get(script, 0) + 1
    return max(counts, key=lambda s: counts[s]) if counts else "LATIN"


def language_script(language: str) -> str:
    """The script `language` is written in ("LATIN" for those not in the table)."""
    return _SCRIPTS.get(language, "LATIN")


def is_right_to_left(text: str) -> bool:
    """Whether the text holds letters of a script written right to left."""
    return _RTL.search(text) is not None
