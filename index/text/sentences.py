"""Sentences, in every language: one split for ranking, the relevance rule and quotes alike.

A sentence ends at a terminal of any script (the full stop, question and exclamation marks of
Latin, Greek and Cyrillic; CJK's 。！？; Devanagari's । and ॥; Arabic's ؟ and ۔; Armenian's ։;
Ethiopic's ።; Myanmar's ။; Khmer's ។...) and the quotes or brackets that close on it, before
a space, or at once after a CJK one. A full stop does not end a sentence after an abbreviation
of the text's language (pysbd's lists, read as data), an initial ("J. R. R. Tolkien", "U.S."),
or before a lower-case letter. Commas never end one: pysbd's rules end Arabic, Persian and Urdu
sentences at every "،", so quotes of those languages were clauses.

Thai and Lao have no full stop: a space ends a phrase, and a sentence there is the phrases up
to the first space after `UNSPACED_SENTENCE` characters, so that a Thai sentence is about as
long as other languages' rather than a phrase of a few words.

This is a rule, not a model, and runs in 0.02-0.4 ms a passage (pysbd took 2-27 ms), so that
the twenty passages a question rescores are split as their quotes will be.
"""

from __future__ import annotations

import functools
import re

from index.text.scripts import READ_IN_PAIRS

__all__ = ["split_sentences"]

# Terminals that end a sentence before a space (or the text's end).
_TERMINALS = ".!?…‼⁇⁈⁉։؟۔।॥።፧፨။၊᙮᠃᠉។៕⳹⳾⸮꓿꘎꛳꛷﹒﹖﹗"
# CJK's full-width terminals end a sentence without a space after them.
_FULL_WIDTH = "。！？｡"
_CLOSERS = "\"'”’»›)]}」』）】〕〉》"
# Before a space, “ and ‘ close too: German's „…“ and ‚…‘ (English's, which they open, never
# follow a terminal without a space; Chinese's can, after ！ and before the next sentence).
_SPACED_CLOSERS = _CLOSERS + "“‘"
# A terminal and its closers stay with the sentence they end; the spaces after go.
_END = re.compile(
    rf"[{re.escape(_TERMINALS)}][{re.escape(_SPACED_CLOSERS)}]*(?=\s)"
    rf"|[{_FULL_WIDTH}][{re.escape(_CLOSERS)}]*"
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
    rows, and no sentence runs from one into the next."""
    language = language or "en"
    return [s for line in text.split("\n") for s in _split_line(line, language)]


def _split_line(text: str, language: str) -> list[str]:
    text = text.strip()
    out: list[str] = []
    while len(text) > _MAX_SEGMENT:
        # At the last sentence end within the limit, else at its last space.
        ends = [m.end() for m in _END.finditer(text, 0, _MAX_SEGMENT)]
        cut = ends[-1] if ends else text.rfind(" ", 0, _MAX_SEGMENT)
        cut = cut if cut > 0 else _MAX_SEGMENT
        out.extend(_segment(text[:cut], language))
        text = text[cut:].lstrip()
    out.extend(_segment(text, language))
    return [s for s in out if re.search(r"\w", s)]


def _segment(text: str, language: str) -> list[str]:
    if not text:
        return []
    if language in _SPACED_PHRASES:
        return _phrases(text)
    sentences: list[str] = []
    start = 0
    for end in _END.finditer(text):
        piece = text[start : end.end()]
        after = text[end.end() :].lstrip()[:1]
        if not after or _continues(piece, after, language):
            continue
        sentences.append(piece.strip())
        start = end.end()
    sentences.append(text[start:].strip())
    return [s for s in sentences if s]


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


def _phrases(text: str) -> list[str]:
    """Phrases joined into sentences: a space ends one once it holds `UNSPACED_SENTENCE`
    characters."""
    out: list[str] = []
    current = ""
    for phrase in text.split():
        current = f"{current} {phrase}" if current else phrase
        if len(current) >= UNSPACED_SENTENCE:
            out.append(current)
            current = ""
    if current:
        out.append(current)
    return out
