"""Sentences, in every language: one split for ranking, the relevance rule and quotes alike.

A sentence ends at a run of terminals of any script (Unicode's sentence terminals: the full
stop, question and exclamation marks of Latin, Greek and Cyrillic; CJK's 。！？; Devanagari's
। and ॥; Arabic's ؟ and ۔; Armenian's ։; Ethiopic's ።; Myanmar's ။ but not its comma ၊;
Khmer's ។...; Greek's question mark ";"), "?!", "！！" and "。。。" alike, and the quotes or
brackets that close on it, before a space, or at once after a wide CJK one. A full stop does
not end a sentence after an abbreviation of the text's language (pysbd's lists, read as data),
an initial ("J. R. R. Tolkien", "U.S."), or before a lower-case letter. Commas never end one:
pysbd's rules end Arabic, Persian and Urdu sentences at every "،", so quotes of those languages
were clauses. Every character of a line is in a sentence but the spaces between them.

Thai and Lao have no full stop: a space ends a phrase, and a sentence there is the phrases up
to the first space after `UNSPACED_SENTENCE` characters, so that a Thai sentence is about as
long as other languages' rather than a phrase of a few words.

This is a rule, not a model, and runs in 0.02-0.4 ms a passage (pysbd took 2-27 ms), so that
the twenty passages a question rescores are split as their quotes will be.
"""

from __future__ import annotations

import functools
import re

import regex

from index.text.scripts import READ_IN_PAIRS, writing_system

__all__ = ["split_sentences"]

# A sentence ends at a run of terminals: Unicode's sentence terminals (\p{STerm}: the full
# stops, question and exclamation marks of every script) and the ellipsis, but Myanmar's little
# section "၊", which Unicode counts among them and writers use as a comma. In Greek the question
# mark is ";" (U+037E, which NFC writes as U+003B), a semicolon everywhere else.
_TERMINALS = r"\p{STerm}…⳾"
_NOT_TERMINALS = "\u104a"
_GREEK_QUESTION = ";"
# The wide terminals of Chinese and Japanese (。！？ and their small, vertical and half-width
# forms) end a sentence with no space after them; the wide full stops that also write decimals
# ("３．５") need one, as "." does.
_WIDE = r"[[\p{STerm}]&&[\p{ea=W}\p{ea=F}\p{ea=H}]--[．﹒]]"
_CLOSERS = "\"'”’»›)]}」』）】〕〉》"
# Before a space, “ and ‘ close too: German's „…“ and ‚…‘ (English's, which they open, never
# follow a terminal without a space; Chinese's can, after ！ and before the next sentence).
_SPACED_CLOSERS = _CLOSERS + "“‘"


@functools.lru_cache(maxsize=8)
def _ends(greek: bool) -> regex.Pattern[str]:
    """A run of terminals and the closers after it, which stay with the sentence they end
    (the spaces after go): before a space, or at once where the run holds a wide terminal."""
    extra = _GREEK_QUESTION if greek else ""
    terminal = f"[[{_TERMINALS}{extra}]--[{_NOT_TERMINALS}]]"
    return regex.compile(
        rf"{terminal}*{_WIDE}{terminal}*[{regex.escape(_CLOSERS)}]*"
        rf"|{terminal}+[{regex.escape(_SPACED_CLOSERS)}]*(?=\s)",
        regex.V1,
    )


# A quotation runs on over its own full stops ("I couldn't breathe. I went in," he said.) up
# to this many characters; past them an unclosed quotation mark is a typo, not a quotation.
_QUOTATION = 600
_STRAIGHT_OPENS = re.compile(r'(?:^|[\s(\[])"(?=\S)')
_STRAIGHT_CLOSES = re.compile(r'(?<=\S)"')  # also before a suffix: Turkish "Franklar"ın
# The word before a full stop: what an abbreviation is looked up by.
_LAST_WORD = re.compile(r"([^\s\"'“‘(\[]+)\.[\"'”’)\]]*$")
# Languages written without a terminal at a sentence's end: a space ends a phrase.
_SPACED_PHRASES = frozenset({"th", "lo"})
UNSPACED_SENTENCE = 60
_PHRASE = re.compile(r"\S+")
_WORDLIKE = re.compile(r"\w")
# Languages that write an ordinal number with a full stop ("am 3. Oktober"): a number of one or
# two digits before a full stop is an ordinal there, not a sentence's end.
_ORDINAL_STOP = frozenset("de da no nb nn fi et is cs sk sl hr sr bs hu pl lv lt tr".split())
# Work is bounded: a paragraph longer than this is split in pieces of at most this size first.
_MAX_SEGMENT = 5_000


@functools.lru_cache(maxsize=64)
def _abbreviations(language: str) -> tuple[frozenset[str], frozenset[str]]:
    """pysbd's abbreviations of `language`, lower case and without their last full stop: those
    that never end a sentence, and those that are words too unless a number follows ("No. 5",
    "art. 3" but "in art."). A language pysbd has no list for has none: another language's
    abbreviations are its words ("mar." ends a Portuguese sentence, "man." a Swedish one), and
    initials and ordinals are read without a list."""
    from pysbd.languages import LANGUAGE_CODES

    rules = getattr(LANGUAGE_CODES.get(language), "Abbreviation", None)

    def listed(name: str) -> frozenset[str]:
        return frozenset(a.strip().rstrip(".").casefold() for a in getattr(rules, name, ()) or ())

    before_numbers = listed("NUMBER_ABBREVIATIONS")
    return listed("ABBREVIATIONS") - before_numbers, before_numbers


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """Split text into sentences, keeping their original wording; `language` is the text's
    (ISO 639-1), None for English's abbreviations.

    Each line is split on its own: the lines of a paragraph are a list's items or a table's
    rows, and no sentence runs from one into the next. Every character of a line but the
    spaces between sentences is in one of them: a piece without a word (a run of marks, "...")
    stays with the sentence before it."""
    language = language or "en"
    return [s for line in text.split("\n") for s in _split_line(line, language)]


def _split_line(line: str, language: str) -> list[str]:
    ends = _ends(writing_system(language).name == "GREEK")
    bounds: list[int] = []
    start = 0
    while len(line) - start > _MAX_SEGMENT:
        # At the last sentence end within the limit, else at its last space.
        stop = start + _MAX_SEGMENT
        found = [m.end() for m in ends.finditer(line, start, stop)]
        cut = found[-1] if found else line.rfind(" ", start, stop)
        cut = cut if cut > start else stop
        bounds += [*_segment(line, start, cut, language, ends), cut]
        start = cut
    bounds += _segment(line, start, len(line), language, ends)
    pieces: list[str] = []
    for begin, end in zip([0, *bounds], [*bounds, len(line)], strict=True):
        piece = line[begin:end]
        if pieces and not _WORDLIKE.search(piece):
            pieces[-1] += piece
        elif len(pieces) == 1 and not _WORDLIKE.search(pieces[0]):
            pieces[0] += piece
        else:
            pieces.append(piece)
    return [p.strip() for p in pieces if _WORDLIKE.search(p)]


def _segment(
    line: str, start: int, stop: int, language: str, ends: regex.Pattern[str]
) -> list[int]:
    """Where sentences end in `line[start:stop]`."""
    if language in _SPACED_PHRASES:
        return _phrases(line, start, stop)
    out: list[int] = []
    begin = start
    for end in ends.finditer(line, start, stop):
        piece = line[begin : end.end()]
        after = line[end.end() : stop].lstrip()[:1]
        if not after or _continues(piece, after, language):
            continue
        out.append(end.end())
        begin = end.end()
    return out


def _continues(piece: str, after: str, language: str) -> bool:
    """Whether the sentence goes on past a full stop at the end of `piece`, `after` being the
    character that follows the space."""
    if len(piece) < _QUOTATION and _in_quotation(piece):
        return True
    if after.islower():
        # A sentence starts with a capital where letters have case: "e.g. the", "approx. ten",
        # '"He's tall!" they exclaim'.
        return True
    if not piece.rstrip(_CLOSERS).endswith((".", "．")):
        return False
    found = _LAST_WORD.search(piece)
    if found is None:
        return False
    word = found.group(1).casefold()
    if _is_initial(found.group(1).replace(".", "")):
        return True  # an initial: "J. R. R. Tolkien", "ميشيل إ. مان"
    if language in _ORDINAL_STOP and word.isdigit() and len(word) <= 2:
        return True
    abbreviations, before_numbers = _abbreviations(language)
    return word in abbreviations or (word in before_numbers and after.isdigit())


def _is_initial(word: str) -> bool:
    """Whether `word` (its full stops taken out) is one letter that stands for a name: a capital
    where letters have case, or, in a script without case, a letter alone, which a word there
    never is before a full stop (Arabic's and Hebrew's one-letter words join the next one;
    Persian's "و", "and", never ends a sentence). Not with a vowel sign (Hindi's "है." ends
    one, as "पी." may stand for P), nor in the scripts read in pairs of characters, where one
    character is a word or a syllable ("빨리 와.", "他说 好.")."""
    if len(word) != 1 or not word.isalpha():
        return False
    return word.isupper() or (not word.islower() and not READ_IN_PAIRS.match(word))


def _in_quotation(piece: str) -> bool:
    """Whether a quotation opened in `piece` is still open at its end. „ opens and “ closes in
    German, ” in Polish, Hungarian, Dutch and Romanian; English opens with “; a straight quote
    opens after a space and closes before one (an inch mark, 8", opens nothing)."""
    if "„" in piece:
        opened = piece.count("„") > piece.count("“") + piece.count("”")
    else:
        opened = piece.count("“") > piece.count("”")
    straight = len(_STRAIGHT_OPENS.findall(piece)) > len(_STRAIGHT_CLOSES.findall(piece))
    return opened or straight or piece.count("«") > piece.count("»")


def _phrases(line: str, start: int, stop: int) -> list[int]:
    """Where phrases joined into sentences end: a space ends one once it holds
    `UNSPACED_SENTENCE` characters."""
    out: list[int] = []
    begin = None
    for phrase in _PHRASE.finditer(line, start, stop):
        begin = phrase.start() if begin is None else begin
        if phrase.end() - begin >= UNSPACED_SENTENCE:
            out.append(phrase.end())
            begin = None
    return out
