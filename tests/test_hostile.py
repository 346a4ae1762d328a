"""Hostile files, text and questions: a clear message or a sensible result, never a traceback,
and never a change to what is stored (another collection stays byte for byte the same)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from fault_tools import (
    SampleArticle,
    pdf_bomb,
    run_cli,
    shared_page_pdf,
    stored_data_dir,
    write_articles,
)

from index import BadInput, Library, Limits
from index.cli import main
from index.embedding.embedder import Embedder
from index.ingest.chunking import chunk_paragraphs
from index.ingest.paragraphs import normalize
from index.ingest.readers import read_bytes, read_text
from index.settings import Settings
from index.storage.sqlite_store import Store

REORDERING = re.compile("[\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def articles(tmp_path_factory: pytest.TempPathFactory) -> list[SampleArticle]:
    return write_articles(tmp_path_factory.mktemp("articles"), count=3)


def fingerprint(data_dir: Path, collection: str = "default") -> tuple[object, ...]:
    """Everything stored for a collection: rows, embeddings, and the index files' bytes."""
    store = Store(data_dir / "articlebot.db")
    try:
        articles = [a.to_json() for a in store.list_articles(collection)]
        passages = store.passages(collection)
        embeddings = [
            hashlib.sha256(vectors.tobytes()).hexdigest()
            for _, vectors in store.iter_embeddings(collection, 384)
        ]
    finally:
        store.close()
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (data_dir / "indexes").glob(f"{collection}.*")
        if p.suffix in (".faiss", ".json")
    }
    return articles, passages, embeddings, files


def hostile_files(folder: Path) -> dict[str, Path]:
    folder.mkdir()
    files = {
        "invalid UTF-8": ("bad.txt", b"Headline\n\n" + bytes(range(0x80, 0x100)) * 40),
        "NUL bytes": ("nul.txt", b"\x00" * 4_000 + b"text"),
        "fake PDF": ("fake.pdf", b"This is plain text wearing a .pdf name."),
        "broken PDF": ("broken.pdf", b"%PDF-1.7\n" + bytes(range(256)) * 20),
        "PDF bomb": ("bomb.pdf", pdf_bomb(300)),
        "20,000 nested divs": (
            "nested.html",
            ("<html><body>" + "<div>" * 20_000 + "<p>Deep.</p>" + "</div>" * 20_000).encode(),
        ),
    }
    paths = {}
    for case, (name, data) in files.items():
        paths[case] = folder / name
        paths[case].write_bytes(data)
    huge = folder / "huge.txt"
    with huge.open("w") as f:  # 70 MB of real text, far over the 20 MB default
        block = "All work and no play makes Jack a dull boy.\n\n" * 1000
        while f.tell() < 70_000_000:
            f.write(block)
    paths["70 MB text file"] = huge
    return paths


EXPECTED = {
    "invalid UTF-8": "not UTF-8 text",
    "NUL bytes": "looks binary",
    "fake PDF": "not a real PDF",
    "broken PDF": "Could not read that PDF",
    "PDF bomb": "Could not read that PDF",
    "20,000 nested divs": "no article text",
    "70 MB text file": "over the limit of 20.0 MB",
}


def test_hostile_files_fail_cleanly_in_a_real_process_and_touch_nothing(
    tmp_path: Path,
    cli_models: Path,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    data_dir = stored_data_dir(tmp_path / "data", cli_models, make_library, articles)
    before = fingerprint(data_dir)

    paths = hostile_files(tmp_path / "hostile")
    one_nul = tmp_path / "one-nul.txt"  # a stray NUL in real text is cleaned, not refused
    one_nul.write_bytes(b"Stray byte\n\nA sentence with one\x00NUL byte inside it.\n")
    result = run_cli(
        data_dir,
        "add",
        *map(str, paths.values()),
        str(one_nul),
        "--collection",
        "hostile",
        "--json",
    )

    assert result.returncode == 1  # some inputs failed
    assert "Traceback" not in result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == len(paths) + 1
    for (case, path), line in zip(paths.items(), lines, strict=False):
        assert line["input"] == str(path)
        assert EXPECTED[case] in line.get("error", ""), (case, line)
        assert line["error"].endswith(".") and "\n" not in line["error"]
    assert lines[-1]["added"] is True
    store = Store(data_dir / "articlebot.db")
    assert [p.text for p in store.passages("hostile")] == [
        "A sentence with one NUL byte inside it."
    ]
    store.close()

    assert fingerprint(data_dir) == before, "another collection must stay untouched"
    after = make_library(data_dir).collection().stats()
    assert (after.articles, after.indexed) == (3, after.passages)


@pytest.mark.slow  # another process
def test_standard_input_that_is_not_text_or_too_big(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    bad = run_cli(data_dir, "add", "-", input_bytes=b"Headline\n\n" + b"\xff\xfe\xfd" * 500)
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    assert "not UTF-8 text" in bad.stderr
    huge = run_cli(
        data_dir,
        "add",
        "-",
        input_bytes=b"word " * 300_000,
        env_extra={"ARTICLEBOT_MAX_FILE_MB": "1"},
    )
    assert huge.returncode == 1 and "Traceback" not in huge.stderr
    assert "over the limit of 1.0 MB" in huge.stderr


# limits as settings, end to end: environment -> settings -> library -> command line


def cli(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), library=library)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("setting", "value", "argv", "message"),
    [
        ("ARTICLEBOT_MAX_FILE_MB", "0.001", ["add", "{file}"], "over the limit of 1.0 kB"),
        ("ARTICLEBOT_MAX_PARAGRAPHS", "2", ["add", "{file}"], "more than the limit of 2"),
        ("ARTICLEBOT_MAX_QUESTION_CHARS", "20", ["ask", "x" * 21], "keep it under 20"),
    ],
)
def test_limits_are_settings(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    articles: list[SampleArticle],
    setting: str,
    value: str,
    argv: list[str],
    message: str,
) -> None:
    settings = Settings.from_env({setting: value})
    library = settings.library(tmp_path / "data")
    argv = [a.replace("{file}", str(articles[0].path)) for a in argv]
    try:
        code, _, err = cli(library, capsys, *argv)
    finally:
        library.close()
    assert code == 1 and message in err and err.count("\n") == 1


@pytest.mark.parametrize("value", ["nan", "inf", "-3", "0", "lots", "1e400"])
def test_nonsense_limit_settings_are_refused_clearly(value: str) -> None:
    with pytest.raises(BadInput, match="ARTICLEBOT_MAX_FILE_MB must be a number"):
        Settings.from_env({"ARTICLEBOT_MAX_FILE_MB": value})


def test_bytes_handed_over_directly_are_held_to_the_limits() -> None:
    # The bot passes attachments and fetched pages as bytes, without read_path's size check.
    limits = Limits(max_file_bytes=1_000, max_page_bytes=2_000)
    with pytest.raises(BadInput, match="over the limit of 1.0 kB"):
        read_bytes(b"x " * 600, "a.txt", limits=limits)
    with pytest.raises(BadInput, match="over the limit of 2.0 kB"):
        read_bytes(b"x " * 1_200, "page", source="url", limits=limits)


def test_a_small_pdf_that_repeats_one_page_into_megabytes_of_text_is_refused() -> None:
    data = shared_page_pdf(pages=79)
    assert len(data) < 100_000  # 79 MB of text from a file this small
    with pytest.raises(BadInput, match="more than 2,000,000 characters of text"):
        read_bytes(data, "shared.pdf")


def test_a_page_of_too_many_tags_is_refused_before_it_is_parsed() -> None:
    page = "<!doctype html><html><body>" + "<p>a</p>" * 80_000 + "</body></html>"
    with pytest.raises(BadInput, match="80,0\\d\\d HTML tags"):
        read_bytes(page.encode(), "page.html")


# hostile text and questions, in-process on the session's model


def test_a_100000_character_paragraph_is_split_whole(embedder: Embedder) -> None:
    """Read and cut into passages with the real tokenizer. (Embedding its ~170 full-length
    passages takes half a minute on a busy 2-core machine; tests/drills/kill_drills.py adds one.)"""
    body = " ".join(f"word{i}" for i in range(20_000))[:100_000].rsplit(" ", 1)[0]
    doc = read_text(f"Long paragraph\n\n{body}\n\nA closing line.")
    assert len(doc.paragraphs) == 2
    passages = chunk_paragraphs(doc.paragraphs, embedder.token_counts, embedder.max_tokens)
    assert {number for number, _, _ in passages} == {1, 2}
    kept = " ".join(text for number, _, text in passages if number == 1)
    assert kept.split() == body.split(), "no word lost or cut in two"
    assert all(n <= embedder.max_tokens for n in embedder.token_counts([t for _, _, t in passages]))


def test_bidirectional_overrides_and_blanks_never_reach_passages_but_joiners_stay(
    library: Library,
) -> None:
    text = (
        "Hid\u00adden\u200d title\u202e\n\n"
        "The \u2066harbour\u2069 bridge was re\u00adpainted \u200fgreen\u200e in June.\ufeff\n\n"
        "\u3164\n\n\u200b\u200b\u200b\n\n"
        "\u202eMayor Adams opened the bridge again.\u202c"
    )
    result = library.collection().add_text(text)
    assert result.article.title == "Hidden\u200d title"
    passages = library.store.passages("default", result.article.id)
    assert [p.text for p in passages] == [
        # Right-to-left and left-to-right marks are spelling in bidirectional text: kept.
        "The harbour bridge was repainted \u200fgreen\u200e in June.",
        "Mayor Adams opened the bridge again.",
    ]
    answer = library.collection().ask("What colour was the \u202eharbour\u200b bridge painted?")
    assert answer.citations and not REORDERING.search(answer.answer)
    assert "green" in answer.answer


@pytest.mark.parametrize(
    ("question", "message"),
    [
        ("", "Give a question"),
        (" \t\n ", "empty"),
        ("\u200b\u202e\u3164\ufeff", "empty"),
        ("?" * 10_000, "keep it under 1,000"),
        ("why " * 2_500, "keep it under 1,000"),
    ],
    ids=["empty", "whitespace", "only invisible", "10,000 characters", "10,000 in words"],
)
def test_bad_questions_give_one_line_and_exit_1(
    library: Library, capsys: pytest.CaptureFixture[str], question: str, message: str
) -> None:
    library.collection().add_text("Bridge\n\nThe harbour bridge was repainted green in June.")
    code, out, err = cli(library, capsys, "ask", question)
    assert (code, out) == (1, "")
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.slow  # another process
def test_a_damaged_database_is_reported_and_left_as_it_is(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    database = data_dir / "articlebot.db"
    database.write_bytes(b"this was never an SQLite file " * 100)
    before = database.read_bytes()
    result = run_cli(data_dir, "list")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "damaged or not an articlebot database" in result.stderr
    assert database.read_bytes() == before
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    result = run_cli(not_a_folder, "stats")
    assert result.returncode == 1 and "Cannot create the data folder" in result.stderr


def test_normalized_text_is_what_the_property_tests_promise() -> None:
    # The one case the hypothesis strategies reach rarely: every kind of line break at once.
    assert normalize("a\r\nb\rc\x85d\u2028e\u2029f") == "a\nb\nc\nd\ne\n\nf"


def test_a_bracketed_number_in_an_article_never_reads_as_a_citation(library: Library) -> None:
    collection = library.collection()
    collection.add_text(
        "Harbor notes\n\nThe ferry terminal will cost 80 million dollars [2], the authority said.",
    )
    collection.add_text("Other news\n\nThe museum reopened on Sunday after a long renovation.")
    answer = collection.ask("How much will the ferry terminal cost?")
    assert not answer.abstained
    assert "80 million dollars (2)" in answer.answer
    assert re.findall(r"\[(\d+)\]", answer.answer) == ["1"]


def test_an_uploaded_page_cannot_claim_a_real_sites_address_or_name() -> None:
    page = (
        "<!doctype html><html><head><title>Ferry terminal approved</title>"
        '<link rel="canonical" href="https://news.example.com/ferry">'
        '<meta property="og:site_name" content="Example News"></head><body><article>'
        "<p>The harbor authority approved a new ferry terminal on Tuesday after a long debate "
        "that lasted most of the year.</p>"
        "<p>The terminal will cost 80 million dollars and is due to open in the spring.</p>"
        "</article></body></html>"
    )
    doc = read_bytes(page.encode(), "ferry.html")
    assert doc.url is None and doc.site is None
    fetched = read_bytes(
        page.encode(), "ferry", source="url", url="https://news.example.com/ferry?ref=feed"
    )
    assert fetched.url == "https://news.example.com/ferry" and fetched.site == "Example News"
    elsewhere = read_bytes(page.encode(), "ferry", source="url", url="https://blog.example.org/p")
    assert elsewhere.url == "https://blog.example.org/p"


def test_a_collection_full_to_its_limits_refuses_more_and_keeps_what_it_has(
    make_library: Callable[..., Library],
) -> None:
    library = make_library(limits=Limits(max_articles=2, max_passages=3))
    collection = library.collection()
    collection.add_text("One\n\nThe first article has one paragraph.")
    with pytest.raises(BadInput, match="past its limit of 3"):
        collection.add_text("Long\n\nFirst paragraph here.\n\nSecond one.\n\nThird one.")
    collection.add_text("Two\n\nThe second article has one paragraph too.")
    with pytest.raises(BadInput, match="holds 2 articles, its limit"):
        collection.add_text("Three\n\nA third article.")
    assert [a.title for a in collection.articles()] == ["Two", "One"]
    assert library.collection("another server").add_text("Elsewhere\n\nRoom here.").added
