"""Text clean-up and the rules that turn raw article text into numbered paragraphs.

The rules are general to copied web news: cross-promotion headlines in capitals, app adverts,
share/subscribe prompts and reporter credits are not the article and never become passages.
Subheadings are not passages either: each becomes the heading of the paragraphs beneath it.
A list or a table stays one paragraph with one line per item or row.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from index.errors import BadInput
from index.ingest.inline_markdown import strip_emphasis, strip_links
from index.messages.catalogue import N_
from index.text import normalize

__all__ = [
    "Split",
    "content_hash",
    "decode_bytes",
    "is_boilerplate",
    "normalize",
    "split_paragraphs",
]

_PROMPT = re.compile(
    r"""^(
        (click|tap|swipe)\b.*\b(here|app|download|subscribe|sign\ up|newsletter|video|more)\b
      | (download|get|install)\ (the|our)\b.*\bapp\b
      | (sign\ up|subscribe|register)\b.*\b(newsletter|updates|alerts|free|today|here|now)\b
      | follow\ us\b
      | share\ (this|on)\b
      | (read|see|watch)\ (more|also|next|the\ full)\b.*$
      | (related|recommended|trending|advertisement|sponsored|more\ from)\b.{0,80}$
      | (photo|image|video)\ (credit|courtesy)\b
      | this\ (story|article)\ (has\ been|was)\ (updated|corrected)\b
      | copyright\b|©
      | get\ (the\ latest|our)\b.*\b(inbox|newsletter|updates|headlines)\b
      | (like|enjoy(ed)?|love)\ this\ (story|article)\b.*\bshare\b
      | you\ (may|might)\ also\ (like|enjoy)\b
      | don[\'’]?t\ miss\b[^.!?]{0,40}$
      | (\d+\ )?comments?\W*$
      | follow\ [^.]{1,40}\ on\ (instagram|twitter|x|facebook|tiktok|youtube|threads|bluesky)\b
      | (already\ a\ subscriber|subscribe\ to\ (continue|read))\b
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_CREDIT = re.compile(
    r"""(contributed\ (to\ )?this\ (report|story|article)
      | contributed\ (additional\ )?reporting
      | ^(additional\ )?reporting\ by\b
      | ^(editing|edited|written|compiled)\ by\b
      | ^(?-i:By|BY)\ (?-i:[A-Z])[^.!?]{1,60}$)""",  # a byline: "By Pieter de Wit"
    re.IGNORECASE | re.VERBOSE,
)
_MARKDOWN_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
# Markdown output escapes what would otherwise be syntax ("shot \[again\]"); the stored text
# is the reader's, without the backslashes (which would also break the text-fragment link).
_MARKDOWN_ESCAPE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~<])")
_ASIDE = 0xE000
# Inline tags the extractor lets through (<u>, <sup>, <span ...>): their text stays.
_INLINE_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]{0,20}(?:\s[^<>]{0,200})?/?>")


# What `decode_bytes` says of bytes it refuses (empty, binary, not UTF-8), by what they are:
# whole sentences, so that each is said in the reader's words.
_UNREADABLE: dict[str, tuple[str, str, str]] = {
    "The file": (
        N_("The file is empty; send an article with some text in it."),
        N_("The file looks binary, not text; send a .txt, .md, .html or .pdf article."),
        N_("The file is not UTF-8 text; save it as UTF-8 and add it again."),
    ),
    "The page": (
        N_("The page is empty; send an article with some text in it."),
        N_("The page looks binary, not text; send a .txt, .md, .html or .pdf article."),
        N_("The page is not UTF-8 text; save it as UTF-8 and add it again."),
    ),
    "The standard input": (
        N_("The standard input is empty; send an article with some text in it."),
        N_("The standard input looks binary, not text; send a .txt, .md, .html or .pdf article."),
        N_("The standard input is not UTF-8 text; save it as UTF-8 and add it again."),
    ),
}
# The same of a file given by its name (the name a field: it is the user's, not ours).
_UNREADABLE_NAMED = (
    N_("{name} is empty; send an article with some text in it."),
    N_("{name} looks binary, not text; send a .txt, .md, .html or .pdf article."),
    N_("{name} is not UTF-8 text; save it as UTF-8 and add it again."),
)


def decode_bytes(data: bytes, what: str = "The file") -> str:
    """Decode text bytes, refusing binary data with a message that says what to send instead.

    `what` is "The file", "The page" or "The standard input", or else a file's name as the
    message shows it (`'notes.txt'`).
    """
    known = _UNREADABLE.get(what)
    empty, binary, not_utf8 = known or _UNREADABLE_NAMED
    fields = {} if known else {"name": what}
    if not data.strip():
        raise BadInput(empty, **fields)
    head = data[:65536]
    if head.count(b"\x00") > max(1, len(head) // 1000):
        raise BadInput(binary, **fields)
    text = data.decode("utf-8", errors="replace")
    if text.count("\ufffd") > max(3, len(text) // 100):
        raise BadInput(not_utf8, **fields)
    return text


def _letters(line: str) -> list[str]:
    return [ch for ch in line if ch.isalpha()]


# A line in capitals of at most this many words is a section head ("WHO IS THE FRONT-RUNNER?");
# longer ones are headline-length links to other stories (cross-promotion).
_HEAD_WORDS = 8


def _in_capitals(line: str) -> bool:
    """A line in capitals, without the full stop of prose."""
    letters = _letters(line)
    return (
        len(letters) >= 12
        and len(line.split()) >= 3
        and sum(ch.isupper() for ch in letters) / len(letters) > 0.85
        and not line.rstrip().endswith((".", "”", '"'))
    )


def is_boilerplate(line: str) -> bool:
    """True for a line that is not part of the article (promo, advert, prompt, credit)."""
    words = line.split()
    if not words:
        return True
    if len(words) > _HEAD_WORDS and _in_capitals(line):
        return True
    if len(words) <= 25 and _PROMPT.search(line):
        return True
    return len(words) <= 40 and bool(_CREDIT.search(line))


def _strip_markdown(line: str) -> str:
    # An escaped character is text, not syntax: it is set aside (as a private-use character)
    # while links and emphasis are read, then put back without its backslash.
    line = _MARKDOWN_ESCAPE.sub(lambda m: chr(_ASIDE + ord(m.group(1))), line)
    line = strip_emphasis(strip_links(line))
    line = re.sub(r"^\s*(>|[-*+]\s|\d+[.)]\s)\s*", "", line)
    line = _INLINE_TAG.sub("", line)
    line = re.sub("[\ue000-\ue07f]", lambda m: chr(ord(m.group(0)) - _ASIDE), line)
    # One space where the lines and the layout left several, the spaces an author writes (a
    # no-break space, an ideographic one) kept as written (text/characters.py).
    return normalize(line.replace("\n", " "))


@dataclass
class Split:
    """An article's text cut up: paragraphs, the heading each stands under, what was left out."""

    paragraphs: list[str] = field(default_factory=list)
    headings: list[str | None] = field(default_factory=list)  # one per paragraph
    skipped: list[str] = field(default_factory=list)


_LIST_ITEM = re.compile(r"^\s*([-*+]|\d+[.)])\s")
# As in CommonMark, a numbered item starts a list inside a paragraph only from 1: "(O\n3) is
# usually known as ozone" is one wrapped sentence, not a paragraph and a list's third item.
_LIST_START = re.compile(r"^\s*([-*+]|1[.)])\s")
_TABLE_RULE = re.compile(r":?-{3,}:?")
_BOLD_LINE = re.compile(r"(\*\*|__)([^*_]+)\1")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def _heading(block: str, markdown: bool) -> str | None:
    """The subheading a block is, if it is one: a Markdown heading, a short line all in bold,
    or a short line in capitals; None for a block of text."""
    if markdown and _MARKDOWN_HEADING.match(block):
        return _strip_markdown(_MARKDOWN_HEADING.sub("", block).rstrip("# "))
    if markdown and _BOLD_LINE.fullmatch(block) and len(block.split()) <= 12:
        text = _strip_markdown(block)
        return None if text.endswith((".", ",", ";")) else text
    line = _strip_markdown(block) if markdown else block
    return line if len(line.split()) <= _HEAD_WORDS and _in_capitals(line) else None


def _table_row(line: str) -> str | None:
    """A Markdown table row as a reader says it ("cell, cell"); None for the rule under a head."""
    cells = [c.strip() for c in _UNESCAPED_PIPE.split(line.strip().strip("|"))]
    if all(_TABLE_RULE.fullmatch(c) or not c for c in cells):
        return None
    return ", ".join(text for c in cells if (text := _strip_markdown(c)))


def _markdown_lines(lines: list[str]) -> list[str]:
    """A block's lines of text: each list item or table row on its own line, the lines of a
    wrapped paragraph joined."""
    joined: list[str] = []
    in_list = False
    for line in lines:
        # A block may open with any item; inside a paragraph only a bullet or 1 opens a list.
        item = _LIST_ITEM.match(line) if in_list or not joined else _LIST_START.match(line)
        in_list = in_list or bool(item)
        starts = item or line.startswith("|")
        if joined and not starts and not joined[-1].startswith("|"):
            joined[-1] += " " + re.sub(r"^>\s*", "", line)  # a quote's further lines
        else:
            joined.append(line)
    out = []
    for line in joined:
        text = _table_row(line) if line.startswith("|") else _strip_markdown(line)
        if text:
            out.append(text)
    return out


def split_paragraphs(text: str, *, markdown: bool = False) -> Split:
    """Split normalized text into paragraphs, their headings, and the lines skipped.

    Paragraphs are separated by blank lines; a text with no blank line at all has one paragraph
    per line (as plain-text exports of web pages often do).
    """
    text = normalize(text)
    if re.search(r"\n\s*\n", text):
        blocks = [[line for line in b.split("\n") if line] for b in re.split(r"\n\s*\n", text)]
    else:
        blocks = [[line] for line in text.split("\n")]
    split = Split()
    heading: str | None = None
    for lines in blocks:
        block = " ".join(lines).strip()
        if not block or (markdown and re.fullmatch(r"[-*_=\s]{3,}", block)):
            continue
        if (head := _heading(block, markdown)) is not None:
            heading = head if re.search(r"[^\W_]", head) else None
            if head and is_boilerplate(head):  # "Related stories": no article text beneath
                split.skipped.append(head)
                heading = None
            continue
        kept = []
        for line in _markdown_lines(lines) if markdown else [block]:
            if is_boilerplate(line):
                split.skipped.append(line)
            elif re.search(r"[^\W_]", line):  # a letter or a digit: not only "___" or "..."
                kept.append(line)
        if kept:
            split.paragraphs.append("\n".join(kept))
            split.headings.append(heading)
    return split


def split_title(text: str) -> tuple[str, str]:
    """The first non-empty line is the headline; the rest is the body."""
    text = normalize(text).strip()
    first, _, rest = text.partition("\n")
    title = _MARKDOWN_HEADING.sub("", first).strip().strip("*_").strip()
    return title, rest


def content_hash(paragraphs: list[str]) -> str:
    """Identity of an article's text: the same words in the same paragraphs hash the same."""
    canonical = "\n\n".join(" ".join(p.split()).casefold() for p in paragraphs)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def reflow_lines(text: str) -> str:
    """Rejoin hard-wrapped lines (as PDF text comes) into paragraphs separated by blank lines.

    A line ends its paragraph when it ends a sentence and stops well short of the usual line
    width, which is how a paragraph's last line looks on a printed page.
    """
    lines = [line.strip() for line in normalize(text).split("\n")]
    lengths = sorted(len(line) for line in lines if line)
    if not lengths:
        return ""
    width = lengths[int(len(lengths) * 0.9)] if len(lengths) > 1 else lengths[0]
    out: list[str] = []
    current: list[str] = []
    for line in lines:
        if not line:
            if current:
                out.append(" ".join(current))
                current = []
            continue
        if current and current[-1].endswith("-") and line[:1].islower():
            current[-1] = current[-1][:-1] + line  # a word hyphenated across lines
        else:
            current.append(line)
        if line.endswith((".", "!", "?", "”", '"', ":")) and len(line) < 0.8 * width:
            out.append(" ".join(current))
            current = []
    if current:
        out.append(" ".join(current))
    return "\n\n".join(out)
