"""Many servers in bounded memory: the least recently asked collections let go of their indexes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from index import Library
from index.cli import main
from index.ingest.readers import read_path
from index.search.bm25_index import KeywordIndex
from index.settings import Settings

DEMO = Path(__file__).resolve().parents[2] / "index" / "demo" / "tool-library.md"
QUESTION = "How much did the council approve for the renovation?"


def test_collections_over_the_memory_budget_are_closed_and_answer_again_when_asked(
    make_library: Callable[..., Library],
) -> None:
    library = make_library(index_memory_bytes=1)  # room for the one being asked only
    asked = []
    for n in range(4):
        collection = library.collection(f"guild-{n}")
        collection.add(read_path(DEMO))
        assert "$18,000" in collection.ask(QUESTION).answer
        asked.append(collection)
    # Only the last one asked still holds its indexes; the others were let go.
    assert [c.backend.nbytes() > 0 for c in asked] == [False, False, False, True]
    first = library.collection("guild-0")
    again = first.ask(QUESTION)
    assert not again.abstained and "$18,000" in again.answer
    assert [c.backend.nbytes() > 0 for c in [first, *asked[1:]]] == [True, False, False, False]


def test_a_roomy_budget_keeps_every_collection_open(make_library: Callable[..., Library]) -> None:
    library = make_library()
    collections = [library.collection(f"guild-{n}") for n in range(3)]
    for collection in collections:
        collection.add(read_path(DEMO))
        library.collection(collection.name).ask(QUESTION)
    assert all(c.backend.nbytes() > 0 for c in collections)


def test_a_question_about_one_article_searches_it_without_building_an_index(
    make_library: Callable[..., Library],
) -> None:
    collection = make_library().collection()
    demo = collection.add(read_path(DEMO)).article.id
    other = collection.add_text(
        "Council news\n\nThe council approved $2 million for a new bridge in March.",
    ).article.id
    narrowed = collection.ask(QUESTION, article_ids={demo})
    assert {c.article_id for c in narrowed.citations} == {demo}
    assert "$18,000" in narrowed.answer
    elsewhere = collection.ask(QUESTION, article_ids={other})
    assert {c.article_id for c in elsewhere.citations} == {other}


def test_a_reopened_collection_reads_its_saved_keyword_index_instead_of_rebuilding_it(
    make_library: Callable[..., Library], monkeypatch: pytest.MonkeyPatch
) -> None:
    library = make_library()
    library.collection().add(read_path(DEMO))
    before = library.collection().ask(QUESTION)
    library.close()

    built: list[int] = []
    original = KeywordIndex.__init__

    def counting(
        self: KeywordIndex, ids: list[int], texts: list[str], languages: list[str | None]
    ) -> None:
        built.append(len(ids))
        original(self, ids, texts, languages)

    monkeypatch.setattr(KeywordIndex, "__init__", counting)
    reopened = make_library(library.data_dir)
    after = reopened.collection().ask(QUESTION)
    assert built == []  # the first question of the new process tokenized nothing
    assert (after.answer, after.citations) == (before.answer, before.citations)

    reopened.collection().add_text("Council news\n\nThe council approved a new bridge.")
    reopened.collection().ask(QUESTION)
    assert len(built) == 1  # a change is indexed anew, once


@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 cut short", b"not an index"])
def test_a_damaged_saved_keyword_index_is_built_again(
    make_library: Callable[..., Library], damage: bytes
) -> None:
    library = make_library()
    library.collection().add(read_path(DEMO))
    before = library.collection().ask(QUESTION)
    saved = library.collection().backend.index_file.path.with_suffix(".bm25.npz")
    library.close()
    saved.write_bytes(damage)  # a power cut, a full disk

    after = make_library(library.data_dir).collection().ask(QUESTION)
    assert (after.answer, after.citations) == (before.answer, before.citations)
    assert saved.stat().st_size > 1000  # written whole again


def test_bench_of_many_collections_reports_memory_and_first_question_times(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["bench", "--collections", "5", "--passages-per-collection", "8", "--json"],
        library=library,
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report) == {
        "collections",
        "passages",
        "rss_mb",
        "first_ask_p50_ms",
        "first_ask_p99_ms",
        "warm_ask_p50_ms",
    }
    assert report["collections"] == 5 and report["passages"] == 40
    assert report["rss_mb"] > 0 and report["first_ask_p99_ms"] >= report["first_ask_p50_ms"] > 0
    assert library.store.count("default") == (0, 0)  # made in a folder of its own, then gone


def test_the_memory_budget_is_a_setting() -> None:
    assert Settings.from_env({}).index_memory_bytes == 128_000_000
    assert Settings.from_env({"ARTICLEBOT_INDEX_MEMORY_MB": "512"}).index_memory_bytes == 512e6


def test_articles_stored_before_numbering_get_numbers_counted_per_collection(
    make_library: Callable[..., Library], tmp_path: Path
) -> None:
    library = make_library(tmp_path / "old")
    for name in ("guild-1", "guild-2", "guild-1"):
        library.collection(name).add_text(f"Note\n\nA note for {name}, {len(name) * 7}.")
    library.collection("guild-1").add_text("Other\n\nAnother note for the first server.")
    db = sqlite3.connect(tmp_path / "old" / "articlebot.db")
    # As a data folder of the version before numbering left it (before headings and
    # signatures too).
    db.execute("DROP TABLE sentence_vectors")
    db.execute("DROP TABLE summaries")  # version 8
    db.execute("DROP TABLE signature_bands")
    db.execute("DROP TABLE article_signatures")
    db.execute("ALTER TABLE passages DROP COLUMN heading")
    db.execute("DROP INDEX articles_number")
    db.execute("ALTER TABLE articles DROP COLUMN number")
    db.execute("ALTER TABLE articles DROP COLUMN language")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    library.close()
    reopened = make_library(tmp_path / "old")
    numbers = {
        name: sorted(a.number for a in reopened.collection(name).articles())
        for name in ("guild-1", "guild-2")
    }
    assert numbers == {"guild-1": [1, 2], "guild-2": [1]}
