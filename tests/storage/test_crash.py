"""Crash safety: whatever state a crash leaves, the collection answers correctly when reopened.

SQLite holds every article whole or not at all; the FAISS index and its sidecar are derived and
are repaired from SQLite when a collection is opened. These tests damage the files the ways a
crash can (and some it cannot), kill real `articlebot` processes inside the index save and at
random moments of an add, then reopen the data folder and check `stats` and answers.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from fault_tools import (
    SampleArticle,
    cli_env,
    dead_temp_files,
    kill_after_output,
    new_data_dir,
    start_cli,
    stats,
    write_articles,
)

from index import Library
from index.embedding.embedder import Embedder, PendingVectors
from index.ingest.readers import read_path

pytestmark = pytest.mark.slow  # kill drills on real processes


@pytest.fixture(scope="module")
def articles(tmp_path_factory: pytest.TempPathFactory) -> list[SampleArticle]:
    return write_articles(tmp_path_factory.mktemp("articles"), count=30)


@pytest.fixture(scope="module")
def template(
    embedder: Embedder,
    cli_models: Path,
    articles: list[SampleArticle],
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """A data folder with six articles in `default` and one in `other`, built once."""
    data_dir = new_data_dir(tmp_path_factory.mktemp("template") / "data", cli_models)
    library = Library(data_dir, embedder=embedder)
    for article in articles[:6]:
        library.collection().add(read_path(article.path))
    library.collection("other").add(read_path(articles[6].path))
    library.close()
    return data_dir


@pytest.fixture
def filled(template: Path, tmp_path: Path, make_library: Callable[..., Library]) -> Library:
    """A fresh copy of the template folder, opened."""
    data_dir = tmp_path / "data"
    shutil.copytree(template, data_dir, symlinks=True)
    return make_library(data_dir)


def found_title(library: Library, probe: str) -> str:
    """The title of the first passage cited for `probe` (answered or only closest)."""
    return library.collection().ask(probe).citations[0].title


# damage of every kind, repaired on open


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


DAMAGE: dict[str, Callable[[Path], object]] = {
    "index missing": lambda index: index.unlink(),
    "sidecar missing": lambda index: index.with_suffix(".json").unlink(),
    "both missing": lambda index: shutil.rmtree(index.parent),
    "index empty": lambda index: index.write_bytes(b""),
    "index half written": _truncate,
    "index garbage": lambda index: index.write_bytes(os.urandom(5000)),
    "sidecar not JSON": lambda index: index.with_suffix(".json").write_text("{"),
    "sidecar a list": lambda index: index.with_suffix(".json").write_text("[]"),
    "sidecar other model": lambda index: index.with_suffix(".json").write_text(
        json.dumps({"model": "other-model", "dim": 384, "count": 1, "kind": "flat"})
    ),
    "sidecar wrong count": lambda index: index.with_suffix(".json").write_text(
        json.dumps({"model": "all-MiniLM-L6-v2", "dim": 384, "count": 3, "kind": "flat"})
    ),
    # A consistent pair that holds other vectors: what two processes racing without a lock
    # could leave. Its ids do not match SQLite's; reconciling adds and drops them by id.
    "another collection's index": lambda index: [
        shutil.copy(index.with_name("other.faiss"), index),
        shutil.copy(index.with_name("other.json"), index.with_suffix(".json")),
    ],
}


@pytest.mark.parametrize("damage", DAMAGE, ids=list(DAMAGE))
def test_damaged_index_files_are_repaired_on_open(
    filled: Library,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
    damage: str,
) -> None:
    collection = filled.collection()
    before = collection.stats()
    expected = found_title(filled, articles[2].probe)
    DAMAGE[damage](collection.backend.index_file.path)

    reopened = make_library(filled.data_dir)
    after = reopened.collection().stats()
    assert (after.articles, after.passages, after.indexed) == (6, before.passages, before.passages)
    assert found_title(reopened, articles[2].probe) == expected == articles[2].title
    # The repaired files load as they are in the next process, and the other collection is whole.
    again = make_library(filled.data_dir)
    assert again.collection().stats().indexed == before.passages
    assert again.collection("other").stats().indexed == again.collection("other").stats().passages


def test_dead_temp_files_are_removed_and_nothing_else(
    filled: Library, make_library: Callable[..., Library]
) -> None:
    folder = filled.collection().backend.index_file.path.parent
    dead = [folder / "default.faissk3j9x_2a.tmp", folder / "default.json0aq1zzzz.tmp"]
    for path in dead:
        path.write_bytes(b"half a file")
    kept = [folder / "notes.tmp", folder / "default.faiss.bak", folder / "other.faissabcdefgh.tmp"]
    for path in kept:
        path.write_bytes(b"not ours to delete")
    # a crash mid-save also leaves the index stale
    filled.collection().backend.index_file.path.unlink()

    reopened = make_library(filled.data_dir)
    assert reopened.collection().stats().indexed == reopened.collection().stats().passages
    assert not any(p.exists() for p in dead)
    assert all(p.exists() for p in kept)


# real processes killed inside the index save

# Runs the real CLI with os.replace wrapped so that the process SIGKILLs itself at the moment a
# save would rename its temp file over the index (optionally after cutting the temp file in
# half, as if killed while writing it) or over the sidecar: the windows a kill -9 can hit.
KILL_IN_SAVE = """
import os, signal, sys
target, half = sys.argv[1], sys.argv[2] == "half"
real_replace = os.replace
def replace(src, dst, *args, **kwargs):
    if str(dst).endswith(target):
        if half:
            os.truncate(src, os.path.getsize(src) // 2)
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst, *args, **kwargs)
os.replace = replace
from index.cli import main
sys.exit(main(sys.argv[3:]))
"""


@pytest.mark.parametrize(
    ("target", "half"),
    [(".faiss", "half"), (".faiss", "whole"), (".json", "whole")],
    ids=["while writing the index", "before renaming the index", "between index and sidecar"],
)
def test_a_kill_inside_the_index_save_is_recovered(
    filled: Library,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
    target: str,
    half: str,
) -> None:
    data_dir = filled.data_dir
    collection = filled.collection()
    expected = collection.stats()
    # The index on disk is stale (an article removed behind its back), so the save matters.
    stale = collection.articles()[0]
    filled.store.delete_article("default", stale.id)
    filled.close()

    killed = subprocess.run(
        [sys.executable, "-c", KILL_IN_SAVE, target, half, "rebuild", "--json"],
        env=cli_env(data_dir),
        cwd=data_dir.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert dead_temp_files(data_dir), "the kill should leave the half-done save's temp file"

    report = stats(data_dir)
    assert report["articles"] == 5
    assert report["indexed"] == report["passages"] == expected.passages - stale.passages
    assert dead_temp_files(data_dir) == []
    reopened = make_library(data_dir)
    kept = next(a for a in articles[:6] if a.title != stale.title)
    assert found_title(reopened, kept.probe) == kept.title
    removed = next(a for a in articles[:6] if a.title == stale.title)
    assert stale.title not in {c.title for c in reopened.collection().ask(removed.probe).citations}


# real processes killed at random moments of an add


def test_kill_9_during_adds_loses_nothing(
    tmp_path: Path,
    cli_models: Path,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    """Two `kill -9`s at random moments of `articlebot add` (30 files); after each, `stats`
    in a new process shows indexed == passages; adding again gives exactly the 30 articles.
    (tests/drills/kill_drills.py runs the same with eight kills and more checks.)"""
    data_dir = new_data_dir(tmp_path / "data", cli_models)
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    files = [str(a.path) for a in articles]
    stored = 0
    for _ in range(2):
        proc = start_cli(data_dir, "add", *files, "--json")
        # Once it has printed the first article it stores (the stored ones come first, "already
        # there"), a random moment: embedding, the SQLite commit or the index save of the next.
        # Within 0.4 s, so that the first kill leaves most of the 30 for the second to cut short.
        kill_after_output(proc, lines=stored + 1, delay_s=rng.uniform(0, 0.4))
        assert proc.returncode == -signal.SIGKILL, "it should still have been adding"
        report = stats(data_dir)
        assert report["indexed"] == report["passages"], report
        assert report["articles"] > stored, "each run stores at least the article it printed"
        stored = report["articles"]
        assert dead_temp_files(data_dir) == []

    library = make_library(data_dir)
    collection = library.collection()
    results = [collection.add(read_path(a.path)) for a in articles]
    assert sum(not r.added for r in results) == stored
    final = collection.stats()
    assert final.articles == 30 and final.indexed == final.passages
    assert len({a.title for a in collection.articles()}) == 30
    for article in articles[::7]:
        assert found_title(library, article.probe) == article.title


class SecondModel(Embedder):
    """A second model to switch a collection to: the session model's vectors cut to 128
    dimensions and normalized again, under another name. After `stop_after` passages it raises,
    as a process killed at that point stops: what it staged before is committed, nothing more."""

    def __init__(self, base: Embedder, stop_after: int | None = None) -> None:
        self._base = base
        self.name, self.dim, self.backend = "minilm-first-128", 128, base.backend
        self.max_tokens = base.max_tokens
        self.stop_after = stop_after
        self.embedded = 0

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return self._base.token_counts(texts)

    def _cut(self, vectors: np.ndarray) -> np.ndarray:
        cut = np.ascontiguousarray(vectors[:, : self.dim])
        return cut / np.linalg.norm(cut, axis=1, keepdims=True)

    def start_documents(
        self, texts: Sequence[str], sentences: Sequence[Sequence[str]] | None = None
    ) -> PendingVectors:
        if self.stop_after is not None and self.embedded + len(texts) > self.stop_after:
            raise KeyboardInterrupt("killed")
        self.embedded += len(texts)
        return PendingVectors.ready(self._cut(self._base.encode_documents(texts)))

    def encode_query(self, text: str) -> np.ndarray:
        return self._cut(self._base.encode_query(text)[None, :])[0]

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cut(self._base.encode_queries(texts))


def test_a_reembedding_cut_short_keeps_the_old_model_and_resumes(
    embedder: Embedder,
    make_library: Callable[..., Library],
    sample_text: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("index.pipeline.REEMBED_CHUNK", 4)
    data_dir = tmp_path / "data"
    make_library(data_dir).collection().add_text(sample_text)
    question, paragraph = "Which judge awarded the damages?", 10

    stopped = Library(data_dir, embedder=SecondModel(embedder, stop_after=8))
    with pytest.raises(KeyboardInterrupt):
        stopped.collection().rebuild(reembed=True)
    stopped.close()

    # Some passages have new vectors staged, but the collection is whole on the old model.
    old = make_library(data_dir).collection()
    assert old.stats().model == embedder.name
    assert old.ask(question).citations[0].paragraph == paragraph

    second = SecondModel(embedder)
    resumed = Library(data_dir, embedder=second)
    try:
        result = resumed.collection().rebuild(reembed=True)
        stats = resumed.collection().stats()
        assert (stats.model, stats.indexed, stats.passages) == (second.name, 14, 14)
        # At least the first chunk of 4 was stored before the stop, and is not embedded again.
        assert result.passages == 14 and second.embedded <= 14 - 4, "it resumed"
        assert resumed.collection().ask(question).citations[0].paragraph == paragraph
    finally:
        resumed.close()
