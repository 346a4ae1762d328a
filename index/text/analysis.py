"""Text analysis for keyword search, per language: the one chain that turns a text into terms.

As in Lucene's analyzers, one chain per language, run the same at index time (a passage, with
its article's language) and at question time (with the language the question is read in):

1. normalise: joiners and selectors read as nothing, NFKC, case folding; for Arabic-script
   languages the marks (harakat), the tatweel and the letter variants readers do not tell
   apart; for Greek and Hebrew the marks;
2. tokenize: runs of letters, marks and digits (Unicode words: Python's `re` would cut Hindi
   words at every vowel sign); runs of scripts written without spaces between words (Han,
   Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar) become overlapping character pairs,
   which need no dictionary and find a word however a segmenter would cut it;
3. filter: English stopwords and base forms (said -> say) for English only; single letters out;
4. stem: the Snowball stemmer of the language where PyStemmer has one.

A language is an ISO 639-1 code; None, or a code without rules here, gets steps 1 and 2 alone.
The English chain is the one earlier releases had for every text, so English collections rank
as they did.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Callable

import regex

from index.text.scripts import READ_IN_PAIRS, writing_system
from index.text.word_forms import base_form

__all__ = [
    "ENGLISH",
    "ENGLISH_STOPWORDS",
    "Analyzer",
    "analyze",
    "analyzer",
    "reads_in_pairs",
    "stem",
    "stemmer_languages",
]

ENGLISH = "en"

Analyzer = Callable[[str], list[str]]

# Snowball stemmers by ISO 639-1 code (PyStemmer's names).
_STEMMERS = {
    "ar": "arabic",
    "hy": "armenian",
    "eu": "basque",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "nl": "dutch",
    "en": "english",
    "eo": "esperanto",
    "et": "estonian",
    "fi": "finnish",
    "fr": "french",
    "de": "german",
    "el": "greek",
    "hi": "hindi",
    "hu": "hungarian",
    "id": "indonesian",
    "ga": "irish",
    "it": "italian",
    "lt": "lithuanian",
    "ne": "nepali",
    "no": "norwegian",
    "nb": "norwegian",
    "fa": "persian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "es": "spanish",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}

# Lucene's 33 English stopwords, plus question words, auxiliaries and pronouns: "which" or
# "did" in a question says nothing about which passage answers it. +0.6 points of fused
# Recall@1 on SQuAD dev over Lucene's list alone; NLTK's longer list did no better. Other
# languages keep every word: BM25's idf gives their common words little weight, and a list per
# language would be a guess for most of the languages people write in.
_LUCENE_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
ENGLISH_STOPWORDS = _LUCENE_STOPWORDS | frozenset(
    "what which who whom whose when where why how did does do doing done has have had having "
    "is am are was were be been being i me my we our you your he him his she her hers it its "
    "they them their this that these those would could should can may might must shall also".split()
)

# A word: letters, marks and digits. A run of a script written without spaces is cut in pairs.
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")
# "won't" would split into "won" and "t", and "won" reads as "win" (word_forms.py).
_WONT = regex.compile(r"\bwon['’]t\b")

# Arabic script: the marks are optional in writing, and readers take these letters as one.
_ARABIC_MARKS = regex.compile(r"[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")
_ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ى": "ي", "ة": "ه"})
_PERSIAN_LETTERS = str.maketrans({"ي": "ی", "ك": "ک", "ى": "ی"})
_MARKS = regex.compile(r"\p{Mn}+")


# Every script's decimal digits as ASCII ones: "١٩٩٠" in an Arabic question is the 1990 of an
# English article (NFKC leaves them as they are).
_DIGITS = {
    c: str(unicodedata.digit(chr(c)))
    for c in range(0x80, 0x1FBFA)
    if unicodedata.category(chr(c)) == "Nd"
}


# Characters that join, break or choose the glyphs of a word but do not change which word it
# is (zero-width space, non-joiner and joiner, word joiner, combining grapheme joiner, variation
# selectors): stored and quoted as written (characters.py), read as nothing here, so that
# "حرفه‌ای" typed with or without its non-joiner is one word.
_JOINERS = regex.compile(r"[\u200b-\u200d\u2060\u034f\ufe00-\ufe0f\U000e0100-\U000e01ef]")


def _normalise(text: str, language: str | None) -> str:
    text = _JOINERS.sub("", text)
    text = unicodedata.normalize("NFKC", text).casefold().translate(_DIGITS)
    if language in ("ar", "fa", "ur", "ps"):
        text = _ARABIC_MARKS.sub("", text)
        text = text.translate(_ARABIC_LETTERS if language == "ar" else _PERSIAN_LETTERS)
    elif language in ("el", "he", "yi"):
        text = _MARKS.sub("", unicodedata.normalize("NFD", text))
        text = unicodedata.normalize("NFC", text)
    return text


def _words(text: str) -> list[str]:
    """Unicode words, with runs of unspaced scripts cut in overlapping pairs of characters."""
    out: list[str] = []
    for word in _WORD.findall(text):
        if not READ_IN_PAIRS.search(word):
            out.append(word)
            continue
        # A word may mix scripts ("iphone手机"): the spaced parts stay whole.
        start = 0
        for run in READ_IN_PAIRS.finditer(word):
            if run.start() > start:
                out.append(word[start : run.start()])
            chars = run.group()
            out.extend(
                chars
                if len(chars) == 1
                else [a + b for a, b in zip(chars, chars[1:], strict=False)]
            )
            start = run.end()
        if start < len(word):
            out.append(word[start:])
    return out


def _is_term(word: str) -> bool:
    # Single letters say nothing ("s" of "Tesla's"); single digits do ("Super Bowl 5"), and so
    # does one character of a script whose words are one character long ("水").
    return len(word) > 1 or word.isdigit() or bool(READ_IN_PAIRS.match(word))


@functools.lru_cache(maxsize=64)
def _stemmer(language: str | None) -> Callable[[list[str]], list[str]]:
    name = _STEMMERS.get(language or "")
    if name is None:
        return lambda words: words
    import Stemmer

    return Stemmer.Stemmer(name).stemWords


def reads_in_pairs(language: str | None) -> bool:
    """Whether a text in `language` is analysed into pairs of characters rather than words
    (its script has no spaces between words, or, in Korean, words that run a stem and its
    endings together)."""
    return language is not None and writing_system(language).pairs


def stem(words: list[str], language: str | None) -> list[str]:
    """The words stemmed as `language` stems them (unchanged where it has no stemmer)."""
    return list(_stemmer(language)(words))


def stemmer_languages() -> frozenset[str]:
    """The languages whose words are stemmed."""
    return frozenset(_STEMMERS)


@functools.lru_cache(maxsize=64)
def analyzer(language: str | None) -> Analyzer:
    """The analysis chain of one language, as a function of a text (cached per language)."""
    stem = _stemmer(language)
    if language == ENGLISH:

        def english(text: str) -> list[str]:
            words = _words(_WONT.sub("will not", _normalise(text, language)))
            kept = [base_form(w) for w in words if w not in ENGLISH_STOPWORDS and _is_term(w)]
            return stem(kept)

        return _cached(english)

    def other(text: str) -> list[str]:
        return stem([w for w in _words(_normalise(text, language)) if _is_term(w)])

    return _cached(other)


def _cached(chain: Analyzer) -> Analyzer:
    # Rescoring reads the same top passages question after question; caching their terms saves
    # most of its time.
    @functools.lru_cache(maxsize=8192)
    def terms(text: str) -> tuple[str, ...]:
        return tuple(chain(text))

    return lambda text: list(terms(text))


def analyze(text: str, language: str | None) -> list[str]:
    """The terms of `text` read as `language`, in order."""
    return analyzer(language)(text)
