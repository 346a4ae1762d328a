"""Several writers on one data folder: all succeed, in turn if need be, and nothing is lost.

SQLite's write lock (BEGIN IMMEDIATE, with a busy timeout) serializes the articles; a file lock
serializes the index's load-repair-save, so no process saves over another's vectors. Questions
keep being answered meanwhile.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from fault_tools import (
    SampleArticle,
    new_data_dir,
    run_cli,
    start_cli,
    stats,
    stored_data_dir,
    write_articles,
)

from index import Library
from index.ingest.readers import read_path
from index.search.vectors import VectorIndex
from index.storage.sqlite_store import Store

pytestmark = pytest.mark.slow  # several real processes at once


@pytest.fixture(scope="module")
def articles(tmp_path_factory: pytest.TempPathFactory) -> list[SampleArticle]:
    return write_articles(tmp_path_factory.mktemp("articles"), count=30)


class Asker(threading.Thread):
    """Asks the probes over and over on its own Library until stopped; records any error."""

    def __init__(self, library: Library, probes: list[str]) -> None:
        super().__init__(daemon=True)
        self.library, self.probes = library, probes
        self.stop = threading.Event()
        self.asked = 0
        self.errors: list[BaseException] = []

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                answer = self.library.collection().ask(self.probes[self.asked % len(self.probes)])
                assert all(c.title and c.text for c in answer.citations)
            except BaseException as exc:  # recorded, and the test fails on it
                self.errors.append(exc)
                return
            self.asked += 1

    def finish(self) -> None:
        self.stop.set()
        self.join(timeout=120)


def test_three_concurrent_adds_all_succeed_and_lose_nothing(
    tmp_path: Path,
    cli_models: Path,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    data_dir = new_data_dir(tmp_path / "data", cli_models)
    procs = [
        start_cli(data_dir, "add", *[str(a.path) for a in articles[i::3]], "--json")
        for i in range(3)
    ]
    asker = Asker(make_library(data_dir), [a.probe for a in articles])
    asker.start()
    outputs = [proc.communicate(timeout=600) for proc in procs]
    asker.finish()

    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
        lines = [json.loads(line) for line in out.splitlines()]
        assert len(lines) == 10 and all(line["added"] for line in lines)
    # Before anything repairs it, the index file already holds every vector: the lock kept
    # the three processes from saving over one another.
    sidecar = json.loads((data_dir / "indexes" / "default.json").read_text())
    report = stats(data_dir)
    assert report["articles"] == 30
    assert report["indexed"] == report["passages"] == sidecar["count"]
    assert asker.errors == [] and asker.asked > 0

    library = make_library(data_dir)
    assert {a.title for a in library.collection().articles()} == {a.title for a in articles}
    for article in articles[::5]:
        assert library.collection().ask(article.probe).citations[0].title == article.title


def test_two_libraries_in_one_process_add_in_turn(
    tmp_path: Path, make_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    """The bot and a CLI in one process (two connections, two index lock holders)."""
    data_dir = tmp_path / "data"
    first, second = make_library(data_dir), make_library(data_dir)
    errors: list[BaseException] = []

    def add(library: Library, batch: list[SampleArticle]) -> None:
        try:
            for article in batch:
                library.collection().add(read_path(article.path))
        except BaseException as exc:  # recorded for the assertion below
            errors.append(exc)

    threads = [
        threading.Thread(target=add, args=(first, articles[0:8:2])),
        threading.Thread(target=add, args=(second, articles[1:8:2])),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert errors == []
    for library in (first, second, make_library(data_dir)):
        report = library.collection().stats()
        assert (report.articles, report.indexed) == (8, report.passages)


def test_a_slow_index_save_never_overwrites_a_newer_one(
    tmp_path: Path,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The race the index lock exists for, forced: A is saving a snapshot without B's article
    when B commits it. Unlocked, B saved first and A's stale save then dropped B's vectors from
    the file; locked, B waits for A and saves last. (A waits up to 3 s for B to save.)"""
    data_dir = tmp_path / "data"
    first, second = make_library(data_dir), make_library(data_dir)
    first.collection().add(read_path(articles[0].path))
    second.collection().stats()  # both hold the index in memory now
    a_saving, b_saved = threading.Event(), threading.Event()
    real_save = VectorIndex.save

    def save(self: VectorIndex, path: Path) -> None:
        if threading.current_thread().name == "A":
            a_saving.set()
            b_saved.wait(timeout=3)
            real_save(self, path)
        else:
            real_save(self, path)
            b_saved.set()

    monkeypatch.setattr(VectorIndex, "save", save)

    def add_b() -> None:
        a_saving.wait(timeout=60)
        second.collection().add(read_path(articles[2].path))

    threads = [
        threading.Thread(
            target=lambda: first.collection().add(read_path(articles[1].path)), name="A"
        ),
        threading.Thread(target=add_b, name="B"),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    sidecar = json.loads((data_dir / "indexes" / "default.json").read_text())
    assert sidecar["count"] == first.store.count("default")[1], "the file lost B's vectors"


def test_the_same_article_added_twice_at_once_is_stored_once(
    tmp_path: Path, make_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    data_dir = tmp_path / "data"
    libraries = [make_library(data_dir) for _ in range(3)]
    barrier = threading.Barrier(3)
    results: list[bool] = []

    def add(library: Library) -> None:
        barrier.wait()
        results.append(library.collection().add(read_path(articles[0].path)).added)

    threads = [threading.Thread(target=add, args=(lib,)) for lib in libraries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert sorted(results) == [False, False, True]
    report = make_library(data_dir).collection().stats()
    assert (report.articles, report.indexed) == (1, report.passages)


def test_fresh_processes_create_the_schema_at_once(tmp_path: Path) -> None:
    """Switching a new database to WAL does not wait on SQLite's busy handler; six openers of
    one new folder used to fail about one time in a hundred with "database is locked"."""
    errors: list[BaseException] = []
    for trial in range(100):
        path = tmp_path / str(trial) / "articlebot.db"
        barrier = threading.Barrier(6)

        def open_store(path: Path = path, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                store = Store(path)
                store.set_collection_model("default", "all-MiniLM-L6-v2", 384)
                store.close()
            except BaseException as exc:  # recorded for the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=open_store) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
    assert errors == []


def test_questions_are_answered_during_rebuilds(
    tmp_path: Path,
    cli_models: Path,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    data_dir = stored_data_dir(tmp_path / "data", cli_models, make_library, articles[:5])
    library = make_library(data_dir)
    asker = Asker(make_library(data_dir), [a.probe for a in articles[:5]])
    asker.start()
    rebuilds = [start_cli(data_dir, "rebuild", "--json") for _ in range(2)]
    codes = [proc.wait(timeout=300) for proc in rebuilds]
    in_process = library.collection().rebuild()  # and one in this process, beside the asker
    asker.finish()
    assert codes == [0, 0] and in_process.passages == library.collection().stats().passages
    assert asker.errors == [] and asker.asked > 0
    for proc in rebuilds:
        assert proc.stdout and json.loads(proc.stdout.read())["passages"] == in_process.passages
    result = run_cli(data_dir, "ask", articles[3].probe, "--json")
    assert result.returncode == 0
    assert json.loads(result.stdout)["citations"][0]["title"] == articles[3].title
    shutil.rmtree(data_dir / "indexes")  # and a question repairs a folder with no index at all
    assert make_library(data_dir).collection().ask(articles[1].probe).citations
