"""Writing systems: which script a text or a language is written in, which scripts run their
words together, which are read in pairs of characters, and which are written right to left.
The one table of scripts in the project (`_SYSTEMS`).
"""

from __future__ import annotations

import functools
import sys
import unicodedata
from dataclasses import dataclass

import regex

__all__ = [
    "READ_IN_PAIRS",
    "UNSPACED",
    "WritingSystem",
    "is_right_to_left",
    "language_script",
    "script_of",
    "writing_system",
]


@dataclass(frozen=True)
class WritingSystem:
    """A writing system as the project reads it."""

    name: str  # as `script_of` and `language_script` name it ("LATIN", "CJK")
    scripts: str  # its Unicode scripts (regex's property names), spaced
    languages: str  # the languages written in it (ISO 639-1, py3langid's), spaced
    right_to_left: bool = False
    # Written without spaces between words: there a word's edges are not spaces.
    spaced: bool = True
    # Read by keyword analysis in overlapping pairs of characters: the unspaced scripts, and
    # Hangul, spaced but with words that run a stem and its endings together (analysis.py).
    pairs: bool = False
    extra: str = ""  # letters of the system whose Unicode script is Common ("ー")

    @property
    def letters(self) -> str:
        """Its letters, as the inside of a regex character class."""
        return "".join(rf"\p{{{s}}}" for s in self.scripts.split()) + self.extra


_LATIN = WritingSystem("LATIN", "Latin", "")
_SYSTEMS = (
    _LATIN,
    WritingSystem("CYRILLIC", "Cyrillic", "ru uk bg sr mk be kk ky mn tt"),
    WritingSystem("ARABIC", "Arabic", "ar fa ur ps ug ku", right_to_left=True),
    WritingSystem("HEBREW", "Hebrew", "he yi", right_to_left=True),
    WritingSystem("DEVANAGARI", "Devanagari", "hi mr ne sa"),
    WritingSystem("BENGALI", "Bengali", "bn as"),
    WritingSystem("CJK", "Han Hiragana Katakana", "zh ja", spaced=False, pairs=True, extra="ー"),
    WritingSystem("GREEK", "Greek", "el"),
    WritingSystem("HANGUL", "Hangul", "ko", pairs=True),
    WritingSystem("THAI", "Thai", "th", spaced=False, pairs=True),
    WritingSystem("LAO", "Lao", "lo", spaced=False, pairs=True),
    WritingSystem("KHMER", "Khmer", "km", spaced=False, pairs=True),
    WritingSystem("MYANMAR", "Myanmar", "my", spaced=False, pairs=True),
    WritingSystem("GEORGIAN", "Georgian", "ka"),
    WritingSystem("ARMENIAN", "Armenian", "hy"),
    WritingSystem("ETHIOPIC", "Ethiopic", "am"),
    WritingSystem("SINHALA", "Sinhala", "si"),
    WritingSystem("TAMIL", "Tamil", "ta"),
    WritingSystem("TELUGU", "Telugu", "te"),
    WritingSystem("KANNADA", "Kannada", "kn"),
    WritingSystem("MALAYALAM", "Malayalam", "ml"),
    WritingSystem("GUJARATI", "Gujarati", "gu"),
    WritingSystem("GURMUKHI", "Gurmukhi", "pa"),
    WritingSystem("ORIYA", "Oriya", "or"),
    WritingSystem("THAANA", "Thaana", "dv", right_to_left=True),
    WritingSystem("SYRIAC", "Syriac", "", right_to_left=True),
    WritingSystem("NKO", "Nko", "", right_to_left=True),
)
_BY_LANGUAGE = {code: system for system in _SYSTEMS for code in system.languages.split()}
# What `script_of` calls the letters of a script no language here is written in.
OTHER = "OTHER"

# Letters of the unspaced scripts (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar).
UNSPACED = regex.compile("[" + "".join(s.letters for s in _SYSTEMS if not s.spaced) + "]")
# A run of the scripts keyword analysis reads in pairs of characters: those, and Hangul.
READ_IN_PAIRS = regex.compile("[" + "".join(s.letters for s in _SYSTEMS if s.pairs) + "]+")
# Runs of one system's letters, one named group a system; any other letter is `OTHER`.
_LETTERS = regex.compile(
    "|".join(rf"(?P<{s.name}>[[{s.letters}]&&\p{{L}}]+)" for s in _SYSTEMS)
    + rf"|(?P<{OTHER}>\p{{L}})",
    regex.V1,
)


def writing_system(language: str) -> WritingSystem:
    """The writing system `language` is written in (the Latin alphabet for those not in the
    table)."""
    return _BY_LANGUAGE.get(language, _LATIN)


def language_script(language: str) -> str:
    """The script `language` is written in ("LATIN" for those not in the table)."""
    return writing_system(language).name


def script_of(text: str) -> str:
    """The script most of the text's letters are written in ("LATIN", "CJK", "ARABIC"...;
    `OTHER` for a script no language here is written in)."""
    counts: dict[str, int] = {}
    for run in _LETTERS.finditer(text):
        name = run.lastgroup or OTHER
        counts[name] = counts.get(name, 0) + len(run.group())
    return max(counts, key=lambda s: counts[s]) if counts else _LATIN.name


@functools.cache
def _right_to_left() -> frozenset[str]:
    """Every character Unicode gives a strong right-to-left direction (bidirectional class R
    or AL: Hebrew, Arabic, Syriac, Thaana, N'Ko, Adlam... and their presentation forms), read
    from `unicodedata` once (0.1 s)."""
    strong = ("R", "AL")
    return frozenset(
        chr(c) for c in range(sys.maxunicode + 1) if unicodedata.bidirectional(chr(c)) in strong
    )


def is_right_to_left(text: str) -> bool:
    """Whether the text holds letters of a script written right to left."""
    return not text.isascii() and not _right_to_left().isdisjoint(text)
