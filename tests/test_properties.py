"""Properties of the text pipeline over inputs hypothesis makes up (text_strategies.py: the
characters that break text code). The chunking properties use the real packaged model (loaded
once for the session); the command line's are in test_cli_properties.py.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata

import pytest
from fault_tools import tiny_pdf
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from text_strategies import TEXT, WORDS

from index import BadInput
from index.embedding.embedder import Embedder
from index.ingest.chunking import chunk_paragraphs
from index.ingest.extract import extract_html
from index.ingest.paragraphs import content_hash, decode_bytes, split_paragraphs
from index.ingest.pdf import pdf_text
from index.ingest.readers import read_bytes, read_text
from index.text import normalize
from index.text.sentences import split_sentences

pytestmark = pytest.mark.slow  # property tests (hypothesis)

# Shared settings: no deadline (the machine is shared and slow), a modest number of examples.
PIPELINE = settings(max_examples=300, deadline=None)
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# What normalize must take out, written from Unicode's names (not read from its own table):
# the soft hyphen, the bidirectional embeddings, overrides and isolates, the byte-order mark,
# and the Hangul fillers that draw nothing.
REMOVED = {
    "\u00ad": "SOFT HYPHEN",
    "\u202a": "LEFT-TO-RIGHT EMBEDDING",
    "\u202b": "RIGHT-TO-LEFT EMBEDDING",
    "\u202c": "POP DIRECTIONAL FORMATTING",
    "\u202d": "LEFT-TO-RIGHT OVERRIDE",
    "\u202e": "RIGHT-TO-LEFT OVERRIDE",
    "\u2066": "LEFT-TO-RIGHT ISOLATE",
    "\u2067": "RIGHT-TO-LEFT ISOLATE",
    "\u2068": "FIRST STRONG ISOLATE",
    "\u2069": "POP DIRECTIONAL ISOLATE",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE",
    "\u115f": "HANGUL CHOSEONG FILLER",
    "\u1160": "HANGUL JUNGSEONG FILLER",
    "\u3164": "HANGUL FILLER",
    "\uffa0": "HALFWIDTH HANGUL FILLER",
}
# Spaces an author writes, kept as written inside a line.
KEPT_SPACES = {
    "\u00a0": "NO-BREAK SPACE",
    "\u202f": "NARROW NO-BREAK SPACE",
    "\u3000": "IDEOGRAPHIC SPACE",
}
# Format characters that are spelling, kept wherever they are.
KEPT_FORMAT = {
    "\u200c": "ZERO WIDTH NON-JOINER",
    "\u200d": "ZERO WIDTH JOINER",
    **{chr(0xFE00 + i): f"VARIATION SELECTOR-{i + 1}" for i in range(16)},
    "\U000e0100": "VARIATION SELECTOR-17",
    "\U000e01ef": "VARIATION SELECTOR-256",
}


def test_the_characters_the_tests_name_are_those_unicode_names() -> None:
    for table in (REMOVED, KEPT_SPACES, KEPT_FORMAT):
        assert {ch: unicodedata.name(ch) for ch in table} == table


def unwanted(ch: str) -> bool:
    """What must never reach a passage: the characters above, surrogates, controls (but \\n)
    and line or paragraph separators."""
    return ch in REMOVED or unicodedata.category(ch) in {"Cs", "Cc", "Zl", "Zp"} and ch != "\n"


# Every character of every script an author can write, with its marks, joiners, non-joiners,
# variation selectors, tags and emoji: everything but the characters above that normalize takes
# out, controls, surrogates and the spaces and line breaks it lays out.
WRITTEN = st.text(
    st.characters(
        blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp"),
        blacklist_characters=list(REMOVED),
    ),
    max_size=80,
)
# Letters, marks, digits, punctuation and symbols of any script, with exactly the characters
# whose fate matters: those taken out, the spaces kept, and the format characters kept.
MATTERING = st.text(
    st.one_of(
        st.characters(categories=("L", "M", "N", "P", "S"), exclude_characters=list(REMOVED)),
        st.sampled_from(list(REMOVED)),
        st.sampled_from(list(KEPT_SPACES)),
        st.sampled_from(list(KEPT_FORMAT)),
    ),
    max_size=80,
)
# Words as people write them, where the joiners and non-joiners are spelling.
SPELLED = [
    "حرفه\u200cای",  # Persian: "professional", with its non-joiner
    "می\u200cخواهم",  # Persian: "I want"
    "क्\u200dष",  # Hindi: a half-form joined
    "র\u200d্য",  # Bengali: ya-phala with a joiner
    "👨\u200d👩\u200d👧",  # one family, three people joined
    "❤\ufe0f",  # a heart drawn as emoji
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",  # Scotland's flag
    "ສະ\u200bບາຍ",  # Lao, a word break marked
]


# the text pipeline


@PIPELINE
@given(TEXT)
@example("a\u00adb\u0301")  # removing the soft hyphen lets NFC compose b + accent: idempotent
@example("\ud800\u3164\u2029x")
def test_normalize_leaves_single_spaced_text_without_what_it_removes(text: str) -> None:
    out = normalize(text)
    assert normalize(out) == out
    assert not [ch for ch in out if unwanted(ch)]
    assert not [ch for ch in out if ch.isspace() and ch not in " \n" and ch not in KEPT_SPACES]
    assert "  " not in out
    assert all(line == line.strip() for line in out.split("\n"))


@PIPELINE
@given(WRITTEN)
@example("".join(SPELLED))
def test_normalize_keeps_every_character_an_author_writes(text: str) -> None:
    # Text is the user's: in any script, what is stored is what was written, in NFC.
    assert normalize(text) == unicodedata.normalize("NFC", text)


@PIPELINE
@given(MATTERING)
@example("a\u00adb\u0301")  # removing the soft hyphen lets NFC compose b + accent
@example("\u3000\u115f\u1160\u3000")  # blank-looking: nothing is left
@example("حرفه\u200cای\u00a0۱۰\u202f؟")
def test_normalize_takes_out_what_it_names_and_keeps_spaces_and_joiners(text: str) -> None:
    out = normalize(text)
    kept = "".join(ch for ch in text if ch not in REMOVED)
    # Taken out before NFC, so that what they parted composes; a line's ends are layout.
    assert out == unicodedata.normalize("NFC", kept).strip()
    assert not set(out) & set(REMOVED)
    for ch in [*KEPT_SPACES, *KEPT_FORMAT]:
        assert out.count(ch) == unicodedata.normalize("NFC", kept).strip().count(ch)


@SLOW
@given(st.lists(st.sampled_from(SPELLED), min_size=1, max_size=6), WRITTEN)
def test_an_article_keeps_its_joiners_and_non_joiners(words: list[str], filler: str) -> None:
    paragraph = " ".join([*words, "and", *words])
    doc = read_text(f"Title\n\n{paragraph} {' '.join(filler.split())}")
    assert " ".join(doc.paragraphs).startswith(unicodedata.normalize("NFC", paragraph))


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
        assert not [ch for ch in paragraph if unwanted(ch)]
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
    assert not [ch for ch in doc.title if unwanted(ch)]


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
    # The spaces an author writes are kept as written: the words are the same, and so is the
    # hash that says two texts are one article.
    assert [p.split() for p in first.paragraphs] == [p.split() for p in second.paragraphs]
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
