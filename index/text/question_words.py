"""What a question in another language than English asks for, read from its own language's
question words: a number or a date, a person, a place.

English questions are read by the fuller rules of `search/question_kinds.py` (a number, a time,
a person, a place, a quotation). In other languages the question words are a closed class each,
written here: "how many", "how much", "how long", "how old", "when", "in what year" ask for a
number (a sentence that holds a number the question does not is likelier to be the answer: the
quote's `kind` feature); "who" for a person; "where", "in which city / street" for a place. A
language without an entry here reads no kind.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import regex

__all__ = ["Asked", "asks_for", "new_number", "supplies"]

Asked = Literal["number", "person", "place"]

# Words stand alone where the script spaces its words; in Chinese, Japanese and Thai, and for
# Korean and Telugu stems that take endings, the question word is found inside a run of
# letters, but not inside a longer word (`_LONGER`).
_WORD = r"(?<!\w)(?:{})(?!\w)"
_ANYWHERE = r"(?:{})"

_ASKS: dict[str, str] = {
    "ar": _WORD.format(r"كم|بكم|متى|في أي (?:عام|سنة)|أي عام|ما عدد"),
    "bn": _WORD.format(r"কত|কতগুলো|কতজন|কখন|কবে|কোন (?:সালে|বছর)"),
    "de": _WORD.format(
        r"wie ?viel(?:e|en|er|es)?|wie (?:lange|alt|hoch|gro(?:ß|ss)|weit|oft|schwer)|wann|"
        r"(?:in )?welche(?:m|s|r)? (?:jahr|jahrhundert|jahrzehnt)"
    ),
    "el": _WORD.format(r"πόσ(?:ος|οι|η|ες|ο|α|ων)|πότε|ποι(?:ο|α) (?:έτος|χρονιά)"),
    "es": _WORD.format(r"cu[aá]nt(?:o|a|os|as)|cu[aá]ndo|(?:en )?qu[eé] (?:a[nñ]o|siglo)"),
    "fa": _WORD.format(r"چند|چقدر|چه زمانی|(?:در )?چه سالی"),
    "fi": _WORD.format(r"kuinka (?:monta|paljon|kauan|vanha)|montako|milloin|minä vuonna"),
    "fr": _WORD.format(r"combien|quand|(?:en )?quelle ann[ée]e|quel (?:[âa]ge|si[èe]cle)"),
    "he": _WORD.format(r"כמה|מתי|באיזו שנה|באיזה (?:שנה|עשור|מאה)"),
    "hi": _WORD.format(r"कितन(?:ा|े|ी)|कब|किस (?:वर्ष|साल)"),
    "id": _WORD.format(r"berapa|kapan|tahun berapa"),
    "it": _WORD.format(r"quant(?:o|a|i|e)|quando|(?:in )?(?:quale|che) anno"),
    "ja": _ANYWHERE.format(
        r"いくつ|いくら|何人|何年|何回|何歳|何個|何度|いつ|どのくらい|どれくらい"
    ),
    "ko": _ANYWHERE.format(r"몇|얼마|언제|어느 해"),
    "ms": _WORD.format(r"berapa|bila|tahun berapa"),
    "nl": _WORD.format(r"hoeveel|wanneer|hoe (?:lang|oud|groot|hoog|vaak)|(?:in )?welk jaar"),
    "pl": _WORD.format(r"ile|ilu|ilom|iloma|kiedy|w którym roku|jak długo"),
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
# "Who", "whom", "whose": a person. Where a language's word for "who" is also its word for
# "which" (Greek ποια, Hindi कौन सा), only the forms that ask for a person are written; a
# word that is also a common word of another sense stands where it asks (Arabic من, also
# "from", at the start; French qui, also "that", at the start or after a preposition).
_SOMEONE: dict[str, str] = {
    "ar": r"^\W*(?:و|ف)?(?:من|مَن|مَنْ)(?!\w)(?! أين)|(?<!\w)(?:لمن|بمن)(?!\w)",
    "bn": _WORD.format(r"কে|কার|কাকে|কারা"),
    "de": _WORD.format(r"wer|wem|wen|wessen"),
    # Greek ποιος is "which" as often as "who" (ποιος πληθυσμός, which population).
    "el": _WORD.format(r"(?:από|σε|με|για) ποιον|(?:από|σε|με|για) ποιους|ποιανού|τίνος"),
    "es": _WORD.format(r"qui[eé]n(?:es)?"),
    "fa": _WORD.format(r"چه کسی|چه کسانی"),
    "fi": _WORD.format(r"kuka|ketkä|kenen|kenet|kenelle|keneltä|kenestä"),
    "fr": r"^\W*(?:(?:à|a|de|par|avec|pour|chez|contre) )?qui(?!\w)",
    "he": _WORD.format(r"מי|למי|ומי|של מי"),
    "hi": _WORD.format(r"किसने|किसको|किसे|किसका|किसकी|किसके|कौन(?! सा| सी| से)"),
    "id": _WORD.format(r"siapa|siapakah"),
    "it": _WORD.format(r"chi"),
    "ja": _ANYWHERE.format(r"誰|だれ|どなた|どの人"),
    "ko": _ANYWHERE.format(r"누구|누가"),
    "ms": _WORD.format(r"siapa|siapakah"),
    "nl": _WORD.format(r"wie|wiens"),
    "pl": _WORD.format(r"kto|kogo|komu|kim|czyj|czyja|czyje|czyi"),
    "pt": _WORD.format(r"quem"),
    "ru": _WORD.format(r"кто|кого|кому|кем|ком|чей|чья|чьё|чье|чьи"),
    "sv": _WORD.format(r"vem|vems|vilka personer"),
    "te": _ANYWHERE.format(r"ఎవరు|ఎవరి|ఎవరికి|ఎవరిని"),
    "th": _ANYWHERE.format(r"ใคร"),
    "tr": _WORD.format(r"kim|kimin|kime|kimi|kimden|kimle|kimler|kimlerin|kimdir|kimdi|kimlerdir"),
    "uk": _WORD.format(r"хто|кого|кому|ким|чий|чия|чиє|чиї"),
    "vi": _WORD.format(r"ai(?! cập)|người nào"),
    "zh": _ANYWHERE.format(r"谁|誰|何人"),
}
# "Where", "in which city / country / street": a place. Swedish "var" is also "was", Dutch
# "waar" also "true": Swedish asks only with the words after it.
_PLACE: dict[str, str] = {
    "ar": _WORD.format(r"أين|وين|(?:في )?أي (?:مدينة|بلد|دولة|شارع|مكان|منطقة)"),
    "bn": _WORD.format(r"কোথায়|কোথা থেকে|কোন (?:শহরে|দেশে|রাস্তায়)"),
    "de": _WORD.format(
        r"wo|wohin|woher|(?:in |auf |an )?welche[mrn]? (?:stadt|land|straße|strasse|ort|region)"
    ),
    "el": _WORD.format(r"πού|από πού|σε ποια (?:πόλη|χώρα|οδό|περιοχή)"),
    "es": _WORD.format(r"d[oó]nde|ad[oó]nde|en qu[eé] (?:ciudad|pa[ií]s|calle|lugar|regi[oó]n)"),
    "fa": _WORD.format(r"کجا|در کدام (?:شهر|کشور|خیابان)"),
    "fi": _WORD.format(r"missä|mistä|mihin|millä kadulla|missä kaupungissa"),
    "fr": _WORD.format(r"où|d'où|dans quel(?:le)? (?:ville|rue|pays|région|endroit)"),
    "he": _WORD.format(r"איפה|היכן|לאן|מאיפה|באיזה (?:רחוב|עיר|מדינה|מקום)|באיזו (?:עיר|מדינה)"),
    "hi": _WORD.format(r"कहाँ|कहां|किस (?:शहर|देश|जगह|सड़क|गली|इलाके)"),
    "id": _WORD.format(r"di ?mana|ke ?mana|dari ?mana|(?:di )?(?:jalan|kota|negara) (?:apa|mana)"),
    "it": _WORD.format(r"dove|in (?:quale|che) (?:via|città|paese|luogo|regione)"),
    "ja": _ANYWHERE.format(r"どこ|何処|どの(?:町|都市|国|通り|場所)|何通り"),
    "ko": _ANYWHERE.format(r"어디|어느 (?:도시|나라|거리|곳)"),
    "ms": _WORD.format(
        r"di ?mana|ke ?mana|dari ?mana|(?:di )?(?:jalan|bandar|negara) (?:apa|mana)"
    ),
    "nl": _WORD.format(r"waar|waarheen|in welke (?:straat|stad|land|plaats)"),
    "pl": _WORD.format(
        r"gdzie|dokąd|skąd|(?:na|przy) (?:jakiej|której) ulicy|w (?:jakim|którym) (?:mieście|kraju)"
    ),
    "pt": _WORD.format(r"onde|aonde|(?:em|na|no) (?:que|qual) (?:cidade|rua|pa[ií]s|lugar)"),
    "ru": _WORD.format(
        r"где|куда|откуда|на какой улице|в каком (?:городе|месте)|в какой (?:стране|области)"
    ),
    "sv": _WORD.format(r"var (?:ligger|finns|är|bor|hölls)|vart|varifrån|i vilken (?:stad|land)"),
    "te": _ANYWHERE.format(r"ఎక్కడ"),
    "th": _ANYWHERE.format(r"ที่ไหน|ที่ใด"),
    "tr": _WORD.format(
        r"nerede|nereye|nereden|nerde|nerededir|hangi (?:sokak|şehir|ülke|cadde|yer)\w*"
    ),
    "uk": _WORD.format(r"де|куди|звідки|на якій вулиці|в якому (?:місті|місці)|в якій країні"),
    "vi": _WORD.format(r"ở đâu|đâu|nơi nào|chỗ nào|đường nào|phố nào|thành phố nào|nước nào"),
    "zh": _ANYWHERE.format(
        r"哪里|哪裡|哪儿|哪兒|何处|何處|在哪|哪条街|哪條街|哪座城市|哪个城市|哪個城市|哪个国家|哪個國家"
    ),
}
# Longer words that hold a question word of a language whose question words are found inside
# runs of letters: words that ask nothing ("いつも", always; "几乎", almost; "언제나", always;
# "誰か", someone; "어디나", everywhere), and words that ask more ("いつから", since when), each
# read whole where it is written. As a dictionary segmenter reads a text, the longest word at
# each place is the one read there.
_LONGER: dict[str, str] = {
    "ja": "いつも いつか いつでも いつまでも あいつ こいつ そいつ どいつ いくつか いくつも "
    "いくらか いくらでも いくらも 何人か 何人も 何年か 何年も 何回か 何回も 何歳か 何個か "
    "何個も 何度か 何度も いつから いつまで 誰か 誰も 誰でも だれか だれも だれでも "
    "どこか どこも どこでも どこへでも",
    "zh": "几乎 几何 茶几 几率 谁知 哪里哪里",
    "ko": "몇몇 언제나 언제든 언제든지 얼마간 얼마든지 누구나 누구든 누구든지 누군가 "
    "어디나 어디든 어디든지 어딘가",
    "te": "ఎంతో ఎన్నో ఎప్పుడూ ఎప్పుడో ఎవరో ఎవరైనా ఎక్కడో ఎక్కడైనా",
    "th": "ไม่เท่าไร ไม่เท่าไหร่ ไม่กี่ ใครๆ ใครก็ได้ ที่ไหนก็ได้",
}
_ASKING_LONGER = frozenset("いつから いつまで".split())
_DIGITS = re.compile(r"\d+")
_KINDS: tuple[tuple[Asked, dict[str, str]], ...] = (
    ("number", _ASKS),
    ("person", _SOMEONE),
    ("place", _PLACE),
)


@functools.cache
def _pattern(language: str, kind: Asked = "number") -> regex.Pattern[str] | None:
    """The language's question words of one kind, and the longer words that hold them, read
    leftmost and longest first (POSIX matching)."""
    asks = dict(_KINDS)[kind].get(language)
    if asks is None:
        return None
    longer = sorted(_LONGER.get(language, "").split(), key=len, reverse=True)
    words = "|".join(regex.escape(w) for w in longer)
    return regex.compile(
        f"(?P<longer>{words})|(?P<asks>{asks})" if words else f"(?P<asks>{asks})",
        regex.IGNORECASE | regex.POSIX,
    )


def _asks(question: str, language: str, kind: Asked) -> bool:
    pattern = _pattern(language, kind)
    if pattern is None:
        return False
    return any(
        m["asks"] is not None or m["longer"] in _ASKING_LONGER for m in pattern.finditer(question)
    )


def asks_for(question: str, language: str) -> Asked | None:
    """What the question, written in `language` (ISO 639-1), asks for: a number (how many,
    when), a person (who), a place (where); None when its words do not say, or the language
    has no entry. A question that asks for two ("who won in which year") is read by the first."""
    for kind, _ in _KINDS:
        if _asks(question, language, kind):
            return kind
    return None


def new_number(sentence: str, question: str) -> bool:
    """Whether the sentence holds a number (in any script's digits) that the question does not."""
    return bool(set(_DIGITS.findall(sentence)) - set(_DIGITS.findall(question)))


# A name: a capitalised word (in any script with capitals) after a word that is not, so not the
# first of its sentence, with the capitalised words after it. German capitalises its nouns, so
# there most sentences hold one: weaker evidence, not wrong.
_NAME = regex.compile(
    r"(?<=[\p{Ll}\p{Nd},;:)\"”'’]\s)\p{Lu}[\p{L}\p{M}'’.-]*(?:\s+\p{Lu}[\p{L}\p{M}'’.-]*)*"
)
_WORDS = regex.compile(r"\w+")


def new_name(sentence: str, question: str) -> bool:
    """Whether the sentence holds a name with a word that the question does not, other than a
    day's or a month's ("open on Tuesdays" says neither who nor where)."""
    asked = {w.casefold() for w in _WORDS.findall(question)}
    calendar = _calendar_words()
    for match in _NAME.finditer(sentence):
        for word in _WORDS.findall(match.group(0)):
            folded = word.casefold()
            if folded in asked or folded in calendar or folded.removesuffix("s") in calendar:
                continue
            return True
    return False


@functools.lru_cache(maxsize=1)
def _calendar_words() -> frozenset[str]:
    """The words of the days' and the months' names (CLDR's, through Babel) in English and in
    every language these tables read: capitalised in many of them, and never a person or a
    place."""
    from babel import UnknownLocaleError
    from babel.dates import get_day_names, get_month_names

    words: set[str] = set()
    for language in sorted({"en", *_SOMEONE, *_PLACE}):
        for context in ("format", "stand-alone"):
            try:
                names = [
                    *get_day_names("wide", context, language).values(),
                    *get_month_names("wide", context, language).values(),
                ]
            except UnknownLocaleError:
                continue
            for name in names:
                words.update(w.casefold() for w in _WORDS.findall(name) if not w.isdigit())
    return frozenset(words)


def supplies(sentence: str, kind: Asked, question: str) -> bool:
    """Whether the sentence, in whatever language, holds what a question in another language
    asks for that the question does not hold itself: a number, or a name for a person or a
    place."""
    if kind == "number":
        return new_number(sentence, question)
    return new_name(sentence, question)
