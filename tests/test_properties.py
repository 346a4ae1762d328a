"""Properties of the text pipeline and the command line, over inputs hypothesis makes up.

Text strategies lean on the characters that break text code: invisible and bidirectional marks,
controls, lone surrogates, odd line breaks, combining marks, Markdown syntax and long words.
The chunking and CLI properties use the real packaged model (loaded once for the session).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import unicodedata
from collections.abc import Iterator
from unittest import mock

import pytest
from fault_tools import tiny_pdf
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from index import BadInput, Library
from index.cli import main
from index.embedding.embedder import Embedder
from index.ingest.chunking import chunk_paragraphs
from index.ingest.extract import extract_html
from index.ingest.paragraphs import content_hash, decode_bytes, normalize, split_paragraphs
from index.ingest.pdf import pdf_text
from index.ingest.readers import read_bytes, read_text
from index.ingest.sentences import split_sentences

pytestmark = pytest.mark.slow  # property tests (hypothesis)

# Shared settings: no deadline (the machine is shared and slow), a modest number of examples.
PIPELINE = settings(max_examples=300, deadline=None)
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

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

HANGUL_FILLERS = set("\u115f\u1160\u3164\uffa0")


def invisible(ch: str) -> bool:
    """What must never reach a passage: format, surrogate, control (but \\n) and separator
    characters, the default-ignorable fillers and selectors that render as nothing."""
    category = unicodedata.category(ch)
    if ch == "\n":
        return False
    return (
        category in {"Cf", "Cs", "Cc", "Zl", "Zp"}
        or ch in HANGUL_FILLERS
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U000e0000" <= ch <= "\U000e0fff"
        or ch in "\u034f\u17b4\u17b5\u180b\u180c\u180d\u180e\u180f"
    )


# the text pipeline


@PIPELINE
@given(TEXT)
@example("a\u200db\u0301")  # removing the joiner lets NFC compose b + accent: still idempotent
@example("\ud800\u3164\u2029x")
def test_normalize_leaves_only_visible_single_spaced_text(text: str) -> None:
    out = normalize(text)
    assert normalize(out) == out
    assert not [ch for ch in out if invisible(ch)]
    assert not [ch for ch in out if ch.isspace() and ch not in " \n"]
    assert "  " not in out
    assert all(line == line.strip() for line in out.split("\n"))


@PIPELINE
@given(TEXT, st.booleans())
def test_paragraphs_are_never_empty_and_are_clean(text: str, markdown: bool) -> None:
    split = split_paragraphs(text, markdown=markdown)
    paragraphs, skipped = split.paragraphs, split.skipped
    assert len(split.headings) == len(paragraphs)
    for paragraph in paragraphs:
        # A list or table keeps one item or row a line; no line is blank or padded.
        lines = paragraph.split("\n")
        assert all(line and line == line.strip() for line in lines)
        assert markdown or len(lines) == 1
        assert re.search(r"\w", paragraph)
        assert not [ch for ch in paragraph if invisible(ch) or ch in HANGUL_FILLERS]
    assert all(line and "\n" not in line for line in skipped)


@PIPELINE
@given(TEXT, st.one_of(st.none(), TEXT))
def test_read_text_gives_a_document_or_a_clear_refusal(text: str, title: str | None) -> None:
    try:
        doc = read_text(text, title=title)
    except BadInput as exc:
        assert str(exc).endswith(".") and "\n" not in str(exc)
        return
    assert doc.paragraphs and all(re.search(r"\w", p) for p in doc.paragraphs)
    assert doc.title and doc.title == doc.title.strip() and len(doc.title) <= 300
    assert not [ch for ch in doc.title if invisible(ch)]


@PIPELINE
@given(st.binary(max_size=400))
@example(b"\xff\xfe" * 50)
@example(b"Title\n\nText with one \x00 NUL byte.")
def test_decode_bytes_gives_text_or_a_clear_refusal(data: bytes) -> None:
    try:
        text = decode_bytes(data)
    except BadInput as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(text, str)


@PIPELINE
@given(st.text(st.characters(codec="utf-8", exclude_characters="\x00\ufffd"), min_size=1))
def test_utf8_text_decodes_to_itself(text: str) -> None:
    data = text.encode("utf-8")
    if data.strip():
        assert decode_bytes(data) == text


SAFE_WORD = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,;'-", min_size=1
)
SPACE = st.sampled_from([" ", "  ", "\t", " \t ", "\u00a0", "\u2003", "\u3000"])


@PIPELINE
@given(st.lists(st.lists(SAFE_WORD, min_size=1, max_size=12), min_size=1, max_size=6), st.data())
def test_content_hash_is_stable_under_whitespace_changes(
    paragraphs: list[list[str]], data: st.DataObject
) -> None:
    plain = "Headline\n\n" + "\n\n".join(" ".join(words) for words in paragraphs)

    def spaced(words: list[str]) -> str:
        line = data.draw(SPACE).join(words)
        return data.draw(SPACE) * data.draw(st.booleans()) + line + data.draw(SPACE)

    blank = st.sampled_from(["\n\n", "\n\n\n", "\n \n", "\r\n\r\n", "\n\t\n\n"])
    messy = (
        "Headline"
        + data.draw(blank)
        + "".join(spaced(words) + data.draw(blank) for words in paragraphs)
    )
    try:
        first = read_text(plain)
    except BadInput:  # e.g. a paragraph all in capitals: a promo line, skipped
        with pytest.raises(BadInput):
            read_text(messy)
        return
    second = read_text(messy)
    assert first.paragraphs == second.paragraphs
    assert content_hash(first.paragraphs) == content_hash(second.paragraphs)


LONG_PARAGRAPHS = st.lists(
    st.lists(
        st.one_of(st.sampled_from(WORDS), st.sampled_from([". ", "? ", "—", "(", ")"]), TEXT),
        min_size=1,
        max_size=400,
    ).map(" ".join),
    min_size=1,
    max_size=4,
).map("\n\n".join)


@SLOW
@given(LONG_PARAGRAPHS)
@example(("word " * 700).strip())
@example("x" * 3_000 + " end of it.")
def test_chunks_are_numbered_and_fit_the_model(embedder: Embedder, text: str) -> None:
    paragraphs = split_paragraphs(text).paragraphs
    chunks = chunk_paragraphs(paragraphs, embedder.token_counts, embedder.max_tokens)
    numbers = [number for number, _, _ in chunks]
    assert numbers == sorted(numbers) and set(numbers) == set(range(1, len(paragraphs) + 1))
    for number in set(numbers):
        pieces = [piece for n, piece, _ in chunks if n == number]
        assert pieces == list(range(len(pieces)))
    for _, _, chunk in chunks:
        assert chunk and chunk == chunk.strip()
        fits = embedder.token_counts([chunk])[0] <= embedder.max_tokens
        assert fits or len(chunk.split()) == 1, "only a single unsplittable word may run over"


@SLOW
@given(st.lists(st.sampled_from(WORDS + [". ", "? ", "!"]), min_size=1, max_size=3_000))
def test_sentences_keep_every_word_of_long_text(words: list[str]) -> None:
    text = " ".join(words)
    sentences = split_sentences(text)
    kept = " ".join(sentences).split()
    assert [w for w in kept if re.search(r"\w", w)] == [
        w for w in text.split() if re.search(r"\w", w)
    ]


# hostile files: parsers fail with BadInput, never with their own exceptions


PDF = tiny_pdf(b"A paragraph of text in a small PDF file.")


def test_the_tiny_pdf_is_a_real_one() -> None:
    assert pdf_text(PDF)[1] == "A paragraph of text in a small PDF file."


@PIPELINE
@given(st.data())
def test_damaged_pdfs_fail_cleanly(data: st.DataObject) -> None:
    damaged = bytearray(PDF)
    for _ in range(data.draw(st.integers(1, 6))):
        if not damaged:
            break
        at = data.draw(st.integers(0, len(damaged) - 1))
        action = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        if action == "flip":
            damaged[at] = data.draw(st.integers(0, 255))
        elif action == "cut":
            del damaged[max(at, 6) :]
        elif action == "insert":
            damaged[at:at] = data.draw(st.binary(min_size=1, max_size=20))
        else:
            del damaged[at : at + data.draw(st.integers(1, 40))]
    with contextlib.suppress(BadInput):
        read_bytes(bytes(damaged), "article.pdf")


HTML_PIECES = st.sampled_from(
    [
        "<div>",
        "</div>",
        "<p>",
        "</p>",
        "<table><tr><td>",
        "<script>",
        "</script>",
        "<!--",
        "-->",
        "<![CDATA[",
        "]]>",
        "<br/>",
        "<article>",
        "<html>",
        "<body>",
        "&amp;",
        "&#0;",
        "&#x110000;",
        "&lol;",
        "<?xml version='1.0'?>",
        "<!DOCTYPE html>",
        "<meta charset=x>",
        "<a href='javascript:1'>",
        "<title>",
        "</title>",
        "<svg><style>",
        "A sentence of text. ",
    ]
)


@SLOW
@given(st.lists(st.one_of(HTML_PIECES, TEXT), max_size=60).map("".join))
@example("<svg><style><!DOCTYPE html>")  # trips an assertion inside trafilatura
def test_hostile_html_fails_cleanly(html: str) -> None:
    with contextlib.suppress(BadInput):
        extract_html(html)


# the command line: whatever the arguments, an exit code and no traceback


@pytest.fixture(scope="module")
def cli_library(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    """A data folder with two articles, opened once for all the examples."""
    library = Library(tmp_path_factory.mktemp("cli-data"), embedder=embedder)
    collection = library.collection()
    collection.add_text(
        "Harbour bridge repainted\n\nThe harbour bridge was repainted green in June.\n\n"
        "Mayor Eric Adams opened the bridge again after the work."
    )
    collection.add_text("Budget vote\n\nThe council approved the water budget on Tuesday.")
    yield library
    library.close()


def looks_like_url(value: str) -> bool:
    return "://" in value or value.lower().startswith(("http:", "https:", "ftp:", "file:"))


ARG = st.one_of(
    st.sampled_from(
        [
            "add",
            "ask",
            "list",
            "remove",
            "rebuild",
            "stats",
            "chat",
            "-",
            "--json",
            "--top-k",
            "--collection",
            "--title",
            "--batch",
            "--data-dir",
            "--reembed",
            "--help",
            "0",
            "1",
            "51",
            "-1",
            "99999999999999999999999",
            "default",
            "",
            " ",
            "/",
            "nope.txt",
            "x.pdf",
        ]
    ),
    TEXT.filter(lambda s: not looks_like_url(s)),
)
COMMAND = st.sampled_from(["add", "ask", "list", "remove", "rebuild", "stats", "chat"])


@contextlib.contextmanager
def captured(stdin: str) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.object(sys, "stdin", io.StringIO(stdin)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        yield out, err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COMMAND, st.lists(ARG, max_size=6), TEXT)
@example("remove", ["99999999999999999999999"], "")
@example("ask", ["\udcff\u202e?"], "")
@example("add", ["-"], "\ud800 Title\n\nBody text with a lone surrogate \udcff in it.")
@example("add", ["-", "--title", "\u202e\u3164"], "Body only")
@example("ask", ["--batch", "-", "--json"], '{"question": "bridge?", "collection": "\\udc80"}\n')
def test_any_arguments_end_with_an_exit_code_and_no_traceback(
    cli_library: Library, command: str, argv: list[str], stdin: str
) -> None:
    args = [command, *argv]
    if "--batch" in args and "-" not in args:
        args = [a for a in args if a != "--batch"]  # no batch files from made-up paths
    with captured(stdin) as (out, err):
        try:
            code = main(args, library=cli_library)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            code = exc.code if isinstance(exc.code, int) else 2
    assert code in (0, 1, 2)
    assert "Traceback" not in err.getvalue() + out.getvalue()
    if code == 1:
        assert "error" in err.getvalue() + out.getvalue()
    stats = cli_library.collection().stats()
    assert stats.indexed == stats.passages  # whatever happened, the index still matches
