"""The language a short question is written in, when that is clear: for the bot's own words
around the answer (index/messages), not for reading the question (which reads every language).

A question is a sentence or two, short for an identifier. Its script decides where a script
belongs to one language (Hangul, kana, Thai, Hebrew, Greek); letters that only one language of
a script writes decide next (Ukrainian і, Russian ы, Persian پ); py3langid, among that script's
languages in `among`, decides the rest when it is sure enough. None: not clear.
"""

from __future__ import annotations

from collections.abc import Collection

import regex

from index.text.languages import identify

__all__ = ["question_language", "traditional_chinese"]

_SURE = 0.5  # the identifier's share, among the script's languages, that counts as clear
_LETTERS_NEEDED = 6

_SCRIPTS: list[tuple[regex.Pattern[str], tuple[str, ...]]] = [
    (regex.compile(r"[\p{Hiragana}\p{Katakana}]"), ("ja",)),
    (regex.compile(r"\p{Hangul}"), ("ko",)),
    (regex.compile(r"\p{Thai}"), ("th",)),
    (regex.compile(r"\p{Hebrew}"), ("he",)),
    (regex.compile(r"\p{Greek}"), ("el",)),
    (regex.compile(r"\p{Han}"), ("zh",)),
    (regex.compile(r"\p{Devanagari}"), ("hi",)),
    (regex.compile(r"\p{Arabic}"), ("ar", "fa")),
    (regex.compile(r"\p{Cyrillic}"), ("ru", "uk", "bg")),
]
# Letters that, within their script, one language writes.
_ONLY = [
    (regex.compile(r"[іїєґІЇЄҐ]"), "uk"),
    (regex.compile(r"[ыэёЫЭЁ]"), "ru"),
    (regex.compile(r"[پچژگ]"), "fa"),
]
# Ukrainian without і, ї, є or ґ is rare in a sentence: a Cyrillic question with none is read
# among the others.
_NEEDS_ITS_LETTERS = "uk"
# Traditional characters that simplified Chinese writes otherwise.
_TRADITIONAL = regex.compile(r"[們這來時個說國與麼為會學後點對當開問從還過經體麵關]")


def question_language(question: str, among: Collection[str]) -> str | None:
    """`question`'s language (ISO 639-1) when it is clear and in `among`, else None."""
    letters = sum(1 for ch in question if ch.isalpha())
    for script, languages in _SCRIPTS:
        if not script.search(question):
            continue
        if len(languages) == 1:
            return languages[0] if languages[0] in among else None
        for letter, language in _ONLY:
            if language in languages and letter.search(question):
                return language if language in among else None
        rest = tuple(lang for lang in languages if lang != _NEEDS_ITS_LETTERS and lang in among)
        return _identified(question, rest, letters)
    latin = tuple(lang for lang in among if not any(lang in ls for _, ls in _SCRIPTS))
    return _identified(question, latin, letters)


def traditional_chinese(text: str) -> bool:
    return bool(_TRADITIONAL.search(text))


def _identified(question: str, languages: tuple[str, ...], letters: int) -> str | None:
    if letters < _LETTERS_NEEDED or not languages:
        return None
    language, share = identify(question, among=languages)
    return language if language in languages and share >= _SURE else None
