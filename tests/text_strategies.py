"""Text that breaks text code, for the property tests: invisible and bidirectional marks,
controls, lone surrogates, odd line breaks, combining marks, Markdown syntax and long words; and
sentences in every script, with the marks that end a sentence in each, written from what
Unicode says of them (the Sentence_Terminal property and each mark's scripts), not read from
the code under test."""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import dataclass

import regex
from hypothesis import strategies as st

SPECIALS = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u200e",
    "\u200f",
    "\u202a",
    "\u202e",
    "\u2066",
    "\u2069",
    "\ufeff",
    "\u00ad",
    "\u2060",
    "\u3164",
    "\u115f",
    "\uffa0",
    "\ufe0f",
    "\U000e0041",
    "\u034f",
    "\x00",
    "\x07",
    "\x1b",
    "\x7f",
    "\x85",
    "\x9c",
    "\t",
    "\r",
    "\r\n",
    "\n",
    "\n\n",
    "\x0b",
    "\x0c",
    "\u2028",
    "\u2029",
    "\u00a0",
    "\u1680",
    "\u2003",
    "\u3000",
    "\ud800",
    "\udcff",
    "e\u0301",
    "\u0301",
    "\ufffd",
    "ﬃ",
    "İ",
    "ß",
    "한",
    "中文",
    "🙂",
    "👨\u200d👩\u200d👧",
    "# ",
    "## ",
    "**",
    "*",
    "_",
    "`",
    "[link](http://x)",
    "> ",
    "- ",
    "1. ",
    "---",
    ". ",
    "? ",
    "! ",
    "...",
    "Mr. ",
    "U.S. ",
    "“",
    "”",
    '"',
    "©",
    "COPYRIGHT ",
    "Read more",
    "Subscribe to our newsletter",
    "Reporting by ",
    "ALL CAPS HEADLINE HERE",
]
WORDS = [
    "the",
    "court",
    "ruled",
    "on",
    "Tuesday",
    "that",
    "Bondi",
    "42",
    "3.5",
    "e-mail",
    "a" * 40,
    "x" * 300,
    "supercalifragilistic",
]

ANY_CHAR = st.characters(exclude_categories=())  # every category, surrogates included
TEXT = st.lists(
    st.one_of(ANY_CHAR, st.sampled_from(SPECIALS), st.sampled_from(WORDS).map(lambda w: w + " ")),
    max_size=80,
).map("".join)


# Every character Unicode says ends a sentence (of those this Python's Unicode tables know).
STERM = [
    chr(c)
    for c in range(sys.maxunicode + 1)
    if regex.match(r"\p{STerm}", chr(c)) and unicodedata.category(chr(c)) != "Cn"
]
# MYANMAR SIGN LITTLE SECTION: a Sentence_Terminal to Unicode, a comma to those who write
# Burmese (U+104B, the SECTION, ends the sentence).
MYANMAR_COMMA = "\u104a"
# GREEK QUESTION MARK: canonically the same character as the semicolon, so NFC text holds ";".
GREEK_QUESTION = unicodedata.normalize("NFC", "\u037e")


def ends_without_a_space(mark: str) -> bool:
    """A wide mark of Chinese and Japanese ends a sentence with nothing after it, but a full
    stop that also writes decimals (its compatibility form is ".": "３．５")."""
    wide = unicodedata.east_asian_width(mark) in ("W", "F", "H")
    return wide and unicodedata.normalize("NFKC", mark) != "."


@dataclass(frozen=True)
class Script:
    """Words of one script, and how its sentences end."""

    language: str  # ISO 639-1
    script: str  # its Unicode script, as regex's Script_Extensions names it
    words: tuple[str, ...]
    cased: bool = False
    wide: bool = False  # ends its sentences with the wide marks, nothing between them

    @property
    def terminals(self) -> str:
        """The marks that end a sentence in this script: Unicode's sentence terminals written in
        it (Script_Extensions), and the ASCII ones that spaced scripts borrow or the wide ones."""
        own = [t for t in STERM if regex.match(rf"\p{{scx={self.script}}}", t)]
        own += [t for t in STERM if ends_without_a_space(t)] if self.wide else list(".!?")
        if self.language == "el":
            own.append(GREEK_QUESTION)
        return "".join(dict.fromkeys(t for t in own if t != MYANMAR_COMMA))


SCRIPTS = (
    Script("en", "Latin", ("river", "garden", "library", "council", "market"), cased=True),
    Script("ru", "Cyrillic", ("город", "река", "библиотека", "совет", "рынок"), cased=True),
    Script("el", "Greek", ("πόλη", "ποτάμι", "βιβλιοθήκη", "συμβούλιο", "αγορά"), cased=True),
    Script("hy", "Armenian", ("քաղաք", "գետ", "գրադարան", "խորհուրդ", "շուկա"), cased=True),
    Script("ar", "Arabic", ("مدينة", "نهر", "مكتبة", "مجلس", "سوق")),
    Script("fa", "Arabic", ("شهر", "رودخانه", "کتاب\u200cخانه", "شورا", "بازار")),
    Script("he", "Hebrew", ("עיר", "נהר", "ספרייה", "מועצה", "שוק")),
    Script("hi", "Devanagari", ("शहर", "नदी", "पुस्तकालय", "परिषद", "बाजार")),
    Script("bn", "Bengali", ("শহর", "নদী", "গ্রন্থাগার", "পরিষদ", "বাজার")),
    Script("am", "Ethiopic", ("ከተማ", "ወንዝ", "ቤተመጻሕፍት", "ምክርቤት", "ገበያ")),
    Script("my", "Myanmar", ("မြို့", "မြစ်", "စာကြည့်တိုက်", "ကောင်စီ", "ဈေးဆိုင်")),
    Script("km", "Khmer", ("ទីក្រុង", "ទន្លេ", "បណ្ណាល័យ", "ផ្សារ", "ក្រុមប្រឹក្សា")),
    Script("ko", "Hangul", ("도시", "강물", "도서관", "의회", "시장")),
    Script("zh", "Han", ("城市", "河流", "图书馆", "议会", "市场"), wide=True),
    Script("ja", "Hiragana", ("図書館", "きょう", "カタカナ", "ひらがな", "東京"), wide=True),
)


@st.composite
def sentences(draw: st.DrawFn, script: Script) -> tuple[list[str], str]:
    """Sentences of one script, each ending in a run of its terminals ("?!", "！！", "。。。"),
    and the paragraph they make: a space between them, or nothing after a wide mark."""
    out: list[str] = []
    paragraph = ""
    marks: list[str] = []
    for _ in range(draw(st.integers(1, 5))):
        words = draw(st.lists(st.sampled_from(script.words), min_size=1, max_size=4))
        if script.cased:
            words[0] = words[0][0].upper() + words[0][1:]
        if out:  # after the marks that ended the sentence before
            joined = any(map(ends_without_a_space, marks)) and draw(st.booleans())
            paragraph += "" if joined else " "
        marks = draw(st.lists(st.sampled_from(script.terminals), min_size=1, max_size=3))
        out.append(" ".join(words) + "".join(marks))
        paragraph += out[-1]
    return out, paragraph


def slices(quote: str, text: str) -> bool:
    """Whether `quote` is pieces of `text` in its order, joined by an ellipsis ("…" or " … ")
    where something of the text was left out between them."""
    at = 0
    for part in regex.split(r" … |…", quote):
        found = text.find(part, at)
        if not part or found < 0:
            return False
        at = found + len(part)
    return True
