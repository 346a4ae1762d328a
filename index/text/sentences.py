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

import bisect
import functools
import re
from collections.abc import Iterator

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
def _runs(greek: bool) -> regex.Pattern[str]:
    """A run of terminals, and the closers after it, each taken whole (possessive).

    A run is read once and then judged (`_ends`): a pattern that found the ends itself
    ("terminals, a wide one among them" or "terminals before a space") tried again from each
    mark of a run that ends nothing, and re-read the rest of the run each time, so that 5,000
    marks with no space after them took seconds."""
    extra = _GREEK_QUESTION if greek else ""
    terminal = f"[[{_TERMINALS}{extra}]--[{_NOT_TERMINALS}]]"
    return regex.compile(rf"(?P<marks>{terminal}++)[{regex.escape(_SPACED_CLOSERS)}]*+", regex.V1)


_WIDE_TERMINAL = regex.compile(_WIDE, regex.V1)
_CLOSING = regex.compile(rf"[{regex.escape(_CLOSERS)}]*+", regex.V1)
_SPACE = regex.compile(r"\s", regex.V1)


def _ends(line: str, start: int, stop: int, greek: bool) -> Iterator[int]:
    """Where sentences may end in `line[start:stop]`: after a run of terminals and the closers
    after it, which stay with the sentence they end (the spaces after go): before a space, or
    at once where the run holds a wide terminal (and then only its closers that are not also
    openers)."""
    for run in _runs(greek).finditer(line, start, stop):
        marks = run.end("marks")
        if _WIDE_TERMINAL.search(line, run.start(), marks):
            yield _CLOSING.match(line, marks, stop).end()
        elif run.end() < stop and _SPACE.match(line, run.end()):
            yield run.end()


# A quotation runs on over its own full stops ("I couldn't breathe. I went in," he said.) up
# to this many characters; past them an unclosed quotation mark is a typo, not a quotation.
_QUOTATION = 600
_QUOTATION_MARK = re.compile('[„“”«»"]')  # a straight one also closes before a suffix:
# Turkish "Franklar"ın
# The word before a full stop: what an abbreviation is looked up by.
# Read from its end (`_last_word`): a search for it from each word of a long piece was as slow
# as the piece was long, once for each of its full stops.
_WORD_SEPARATORS = frozenset("\"'“‘([")
_AFTER_A_WORD = frozenset("\"'”’)]")
# Languages written without a terminal at a sentence's end: a space ends a phrase.
_SPACED_PHRASES = frozenset({"th", "lo"})
UNSPACED_SENTENCE = 60
_PHRASE = re.compile(r"\S+")
_WORDLIKE = re.compile(r"\w")
_NOT_SPACE = re.compile(r"\S")  # as str.lstrip() reads a space
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
    greek = writing_system(language).name == "GREEK"
    bounds: list[int] = []
    start = 0
    while len(line) - start > _MAX_SEGMENT:
        # At the last sentence end within the limit, else at its last space.
        stop = start + _MAX_SEGMENT
        cut = max(_ends(line, start, stop, greek), default=-1)
        cut = cut if cut >= 0 else line.rfind(" ", start, stop)
        cut = cut if cut > start else stop
        bounds += [*_segment(line, start, cut, language, greek), cut]
        start = cut
    bounds += _segment(line, start, len(line), language, greek)
    # Spans, not strings, are joined: a piece without a word joins the one before it, and
    # joining strings copied the whole sentence again for each of a run of such pieces.
    spans: list[list[int]] = []
    first_has_word = False
    for begin, end in zip([0, *bounds], [*bounds, len(line)], strict=True):
        has_word = _WORDLIKE.search(line, begin, end) is not None
        if spans and not has_word:
            spans[-1][1] = end
        elif len(spans) == 1 and not first_has_word:
            spans[0][1] = end
            first_has_word = True
        else:
            spans.append([begin, end])
            first_has_word = first_has_word or (len(spans) == 1 and has_word)
    return [line[b:e].strip() for b, e in spans if _WORDLIKE.search(line, b, e)]


def _segment(line: str, start: int, stop: int, language: str, greek: bool) -> list[int]:
    """Where sentences end in `line[start:stop]`."""
    if language in _SPACED_PHRASES:
        return _phrases(line, start, stop)
    out: list[int] = []
    begin = start
    quotations = _Quotations(line, start, stop)
    for end in _ends(line, start, stop, greek):
        following = _NOT_SPACE.search(line, end, stop)
        if following is None or _continues(
            line, begin, end, following.group(), language, quotations
        ):
            continue
        out.append(end)
        begin = end
    return out


def _continues(
    line: str, begin: int, end: int, after: str, language: str, quotations: _Quotations
) -> bool:
    """Whether the sentence `line[begin:end]` goes on past a full stop at its end, `after`
    being the character that follows the space."""
    if end - begin < _QUOTATION and quotations.open_at(begin, end):
        return True
    if after.islower():
        # A sentence starts with a capital where letters have case: "e.g. the", "approx. ten",
        # '"He's tall!" they exclaim'.
        return True
    closed = end
    while closed > begin and line[closed - 1] in _CLOSERS:
        closed -= 1
    if closed == begin or line[closed - 1] not in ".．":
        return False
    found = _last_word(line, begin, end)
    if found is None:
        return False
    word = found.casefold()
    if _is_initial(found.replace(".", "")):
        return True  # an initial: "J. R. R. Tolkien", "ميشيل إ. مان"
    if language in _ORDINAL_STOP and word.isdigit() and len(word) <= 2:
        return True
    abbreviations, before_numbers = _abbreviations(language)
    return word in abbreviations or (word in before_numbers and after.isdigit())


def _last_word(line: str, begin: int, end: int) -> str | None:
    """The word before the full stop that `line[begin:end]` ends with, quotes and brackets
    after it aside; None where no word comes before it. Read back from the end, so that the
    work is the word's length, not the sentence's."""
    stop = end
    while stop > begin and line[stop - 1] in _AFTER_A_WORD:
        stop -= 1
    if stop == begin or line[stop - 1] != ".":
        return None
    word_end = stop - 1
    word_start = word_end
    while word_start > begin and not (
        line[word_start - 1] in _WORD_SEPARATORS or line[word_start - 1].isspace()
    ):
        word_start -= 1
    return line[word_start:word_end] if word_start < word_end else None


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


class _Quotations:
    """The quotation marks of one segment of a line, placed once, so that whether a quotation
    is still open at a full stop is counted from their places and not by reading the sentence
    again at each of its full stops (a paragraph of '"a. ' read 600 characters a mark).

    „ opens and “ closes in German, ” in Polish, Hungarian, Dutch and Romanian; English opens
    with “; a straight quote opens after a space and closes before one (an inch mark, 8",
    opens nothing)."""

    def __init__(self, line: str, start: int, stop: int) -> None:
        self._places: dict[str, list[int]] = {mark: [] for mark in "„“”«»"}
        self._before_text: set[int] = set()  # straight quotes before a character not a space
        self._opening: list[int] = []  # ... and after a space or a bracket
        self._closing: list[int] = []  # straight quotes after a character not a space
        self._all: list[int] = []
        for found in _QUOTATION_MARK.finditer(line, start, stop):
            at = found.start()
            self._all.append(at)
            mark = found.group()
            if mark != '"':
                self._places[mark].append(at)
                continue
            if at + 1 < len(line) and not line[at + 1].isspace():
                self._before_text.add(at)
                if at > 0 and (line[at - 1].isspace() or line[at - 1] in "(["):
                    self._opening.append(at)
            if at > 0 and not line[at - 1].isspace():
                self._closing.append(at)

    def open_at(self, begin: int, end: int) -> bool:
        """Whether a quotation opened in `line[begin:end]` is still open at its end."""

        def count(places: list[int], first: int, stop: int) -> int:
            return max(0, bisect.bisect_left(places, stop) - bisect.bisect_left(places, first))

        if not count(self._all, begin, end):
            return False

        def marks(mark: str) -> int:
            return count(self._places[mark], begin, end)

        german = marks("„")  # and Polish: closed by “ or ”
        opened = german > marks("“") + marks("”") if german else marks("“") > marks("”")
        # A straight quote opens a sentence's text where it is its first character.
        opens = count(self._opening, begin + 1, end - 1)
        opens += begin in self._before_text and begin + 1 < end
        straight = opens > count(self._closing, begin + 1, end)
        return opened or straight or marks("«") > marks("»")


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
