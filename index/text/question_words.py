"""Whether a question asks for a number or a date, read from its own language's question words.

English questions are read by the fuller rules of `search/question_kinds.py` (a number, a time,
a person, a place, a quotation). In other languages only the kinds a digit answers are read:
"how many", "how much", "how long", "how old", "when", "in what year". Then a sentence that
holds a number the question does not is likelier to be the answer (the quote's `kind`
feature). A language without an entry here reads no kind, as before.
"""

from __future__ import annotations

import functools
import re

import regex

__all__ = ["asks_for_a_number", "new_number"]

# Words stand alone where the script spaces its words; in Chinese, Japanese and Thai, and for
# Korean and Telugu stems that take endings, the question word is found inside a run of
# letters, but not inside a longer word (`_LONGER`).
_WORD = r"(?<!\w)(?:{})(?!\w)"
_ANYWHERE = r"(?:{})"

_ASKS: dict[str, str] = {
    "ar": _WORD.format(r"كم|بكم|متى|في أي (?:عام|سنة)|أي عام|ما عدد"),
    "bn": _WORD.format(r"কত|কতগুলো|কতজন|কখন|কবে|কোন (?:সালে|বছর)"),
    "de": _WORD.format(
        r"wie ?viele?|wie (?:lange|alt|hoch|gro(?:ß|ss)|weit|oft|schwer)|wann|"
        r"(?:in )?welche(?:m|s|r)? (?:jahr|jahrhundert|jahrzehnt)"
    ),
    "el": _WORD.format(r"πόσ(?:ος|οι|η|ες|ο|α|ων)|πότε|ποι(?:ο|α) (?:έτος|χρονιά)"),
    "es": _WORD.format(r"cu[aá]nt(?:o|a|os|as)|cu[aá]ndo|(?:en )?qu[eé] (?:a[nñ]o|siglo)"),
    "fa": _WORD.format(r"چند|چقدر|چه زمانی|(?:در )?چه سالی"),
    "fi": _WORD.format(r"kuinka (?:monta|paljon|kauan|vanha)|montako|milloin|minä vuonna"),
    "fr": _WORD.format(r"combien|quand|(?:en )?quelle ann[ée]e|quel (?:[âa]ge|si[èe]cle)"),
    "hi": _WORD.format(r"कितन(?:ा|े|ी)|कब|किस (?:वर्ष|साल)"),
    "id": _WORD.format(r"berapa|kapan|tahun berapa"),
    "it": _WORD.format(r"quant(?:o|a|i|e)|quando|(?:in )?(?:quale|che) anno"),
    "ja": _ANYWHERE.format(
        r"いくつ|いくら|何人|何年|何回|何歳|何個|何度|いつ|どのくらい|どれくらい"
    ),
    "ko": _ANYWHERE.format(r"몇|얼마|언제|어느 해"),
    "ms": _WORD.format(r"berapa|bila|tahun berapa"),
    "nl": _WORD.format(r"hoeveel|wanneer|hoe (?:lang|oud|groot|hoog|vaak)|(?:in )?welk jaar"),
    "pl": _WORD.format(r"ile|kiedy|w którym roku|jak długo"),
    "pt": _WORD.format(r"quant(?:o|a|os|as)|quando|(?:em )?(?:que|qual) ano"),
    "ru": _WORD.format(r"сколько|когда|в как(?:ом|ой) (?:году|веке)|какого года"),
    "sv": _WORD.format(r"hur (?:många|mycket|länge|gammal)|när|vilket år"),
    "te": _ANYWHERE.format(r"ఎన్ని|ఎంత|ఎప్పుడు|ఏ సంవత్సరం"),
    "th": _ANYWHERE.format(r"กี่|เท่าไร|เท่าไหร่|เมื่อไร|เมื่อไหร่|ปีใด|ปีไหน"),
    "tr": _WORD.format(r"ka[çc]|kaçında|ne zaman|ne kadar|hangi y[ıi]l"),
    "uk": _WORD.format(r"скільки|коли|(?:у|в) якому році"),
    "vi": _WORD.format(r"bao nhiêu|bao lâu|khi nào|lúc nào|năm nào|vào năm nào"),
    "zh": _ANYWHERE.format(r"多少|几|幾|何时|何時|什么时候|什麼時候|哪一年|哪年|多久|多长|多長"),
}
# Longer words that hold a question word of a language whose question words are found inside
# runs of letters: words that ask nothing ("いつも", always; "几乎", almost; "언제나", always),
# and words that ask more ("いつから", since when), each read whole where it is written. As a
# dictionary segmenter reads a text, the longest word at each place is the one read there.
_LONGER: dict[str, str] = {
    "ja": "いつも いつか いつでも いつまでも あいつ こいつ そいつ どいつ いくつか いくつも "
    "いくらか いくらでも いくらも 何人か 何人も 何年か 何年も 何回か 何回も 何歳か 何個か "
    "何個も 何度か 何度も いつから いつまで",
    "zh": "几乎 几何 茶几 几率",
    "ko": "몇몇 언제나 언제든 언제든지 얼마간 얼마든지",
    "te": "ఎంతో ఎన్నో ఎప్పుడూ ఎప్పుడో",
    "th": "ไม่เท่าไร ไม่เท่าไหร่ ไม่กี่",
}
_ASKING_LONGER = frozenset("いつから いつまで".split())
_DIGITS = re.compile(r"\d+")


@functools.cache
def _pattern(language: str) -> regex.Pattern[str] | None:
    """The language's question words, and the longer words that hold them, read leftmost and
    longest first (POSIX matching)."""
    asks = _ASKS.get(language)
    if asks is None:
        return None
    longer = sorted(_LONGER.get(language, "").split(), key=len, reverse=True)
    words = "|".join(regex.escape(w) for w in longer)
    return regex.compile(
        f"(?P<longer>{words})|(?P<asks>{asks})" if words else f"(?P<asks>{asks})",
        regex.IGNORECASE | regex.POSIX,
    )


def asks_for_a_number(question: str, language: str) -> bool:
    """Whether the question, written in `language` (ISO 639-1), asks how many, how much, how
    long or when; False for a language these rules do not know."""
    pattern = _pattern(language)
    if pattern is None:
        return False
    return any(
        m["asks"] is not None or m["longer"] in _ASKING_LONGER for m in pattern.finditer(question)
    )


def new_number(sentence: str, question: str) -> bool:
    """Whether the sentence holds a number (in any script's digits) that the question does not."""
    return bool(set(_DIGITS.findall(sentence)) - set(_DIGITS.findall(question)))
