"""A restore happens whole or not at all, and what it restores answers from the store:

- every collection name `add` takes (leading dots, spaces, other scripts, long names) backs up
  and restores, and the restored folder lists and answers it;
- a target that gains a file or becomes a link while the restore runs is never written into;
- the move into an empty mount point (one rename cannot replace it) fails at any step with the
  target left empty, nothing half written beside or inside it, and the backup as it was;
- the indexes are built from the restored store: a backup's FAISS file with other vectors, or a
  keyword index of another collection sealed as this one's, answers nothing.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hostile_backups import ONE_SENTENCE, WORDS, library, reseal, snapshot

from index.cli import main
from index.errors import ArticlebotError
from index.ops import copies
from index.ops import restore as restoring
from index.ops.restore import restore
from index.records import Document
from index.search.embedded_backend import EmbeddedBackend
from index.search.index_file import file_stem
from index.search.vectors import VectorIndex
from index.storage.data_folder import DataFolder
from index.storage.sqlite_store import Store
from index.text.analysis import analyze


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listed(capsys: pytest.CaptureFixture[str], data_dir: Path, collection: str) -> list[Any]:
    """`articlebot list --json` of one collection: the articles a user sees."""
    code, out, err = run(
        capsys, "list", f"--collection={collection}", "--data-dir", str(data_dir), "--json"
    )
    assert code == 0, err
    return [
        {k: a[k] for k in ("id", "collection", "title", "passages", "content_hash")}
        for a in json.loads(out)
    ]


def leftovers(work: Path) -> list[str]:
    """Staging folders and locks of the restore into `work/new`, beside it or inside it."""
    found = [p.name for p in work.iterdir() if p.name.startswith(".new.")]
    new = work / "new"
    if new.is_dir() and not new.is_symlink():
        found += [f"new/{p.name}" for p in new.iterdir() if p.name.startswith(".new.")]
    return found


# collection names


NAMES = [".x", "..x", ".", "..", "a b", "Überblick", "日本語のニュース", "-dash", "x" * 300]


def test_every_collection_name_add_takes_backs_up_and_restores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARTICLEBOT_DATA_DIR", raising=False)
    data, article = tmp_path / "data", tmp_path / "pier.txt"
    for n, name in enumerate(NAMES):
        article.write_text(f"Harbor news {n}\n\n{WORDS[n % 3]}\n", encoding="utf-8")
        lib = library(data)
        try:
            code = main(
                ["add", str(article), f"--collection={name}", "--data-dir", str(data), "--json"],
                lib,
            )
        finally:
            lib.close()
        assert code == 0, name
    capsys.readouterr()
    stems = {p.name for p in (data / "indexes").glob("*.faiss")}
    assert {".x.faiss", "..x.faiss", "..faiss", "...faiss"} <= stems

    code, out, err = run(capsys, "backup", str(tmp_path / "b"), "--data-dir", str(data), "--json")
    assert code == 0, err
    assert json.loads(out)["articles"] == len(NAMES)
    code, out, err = run(capsys, "restore", str(tmp_path / "b"), "--data-dir", "new", "--json")
    assert code == 0, err
    assert json.loads(out)["articles"] == len(NAMES)
    for name in NAMES:
        restored = listed(capsys, tmp_path / "new", name)
        assert restored == listed(capsys, data, name) and len(restored) == 1, name
        assert (tmp_path / "new" / "indexes" / f"{file_stem(name)}.faiss").is_file()
    copy = library(tmp_path / "new")
    try:
        answer = copy.collection(".x").ask("When will the pier open?")
        assert not answer.abstained and answer.citations[0].title == "Harbor news 0"
    finally:
        copy.close()


# the target changing while the restore runs


def during_the_restore(monkeypatch: pytest.MonkeyPatch, act: Callable[[], None]) -> None:
    """Run `act` once the backup's databases are copied and checked, before the move."""
    check = restoring._check_databases

    def checking(*args: Any) -> None:
        check(*args)
        act()

    monkeypatch.setattr(restoring, "_check_databases", checking)


def restore_fails(work: Path, capsys: pytest.CaptureFixture[str], said: str) -> None:
    before = snapshot(work / "backup")
    code, out, err = run(capsys, "restore", str(work / "backup"), "--data-dir", str(work / "new"))
    assert code == 1 and out == "" and ONE_SENTENCE.fullmatch(err), err
    assert said in err and ".partial" not in err
    assert snapshot(work / "backup") == before
    assert leftovers(work) == []


def test_a_target_that_gains_a_file_meanwhile_is_not_written_into(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "new").mkdir()
    during_the_restore(monkeypatch, lambda: (work / "new" / "notes.txt").write_text("mine"))
    restore_fails(work, capsys, "gained files or became a link")
    assert [p.name for p in (work / "new").iterdir()] == ["notes.txt"]
    assert (work / "new" / "notes.txt").read_text() == "mine"


def test_a_target_swapped_for_a_link_meanwhile_is_not_followed(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = work / "elsewhere"
    elsewhere.mkdir()

    def swap() -> None:
        if (work / "new").is_dir():
            (work / "new").rmdir()
        (work / "new").symlink_to(elsewhere, target_is_directory=True)

    during_the_restore(monkeypatch, swap)
    for existed in (False, True):  # absent when the restore began, or an empty folder
        if existed:
            (work / "new").unlink()
            (work / "new").mkdir()
        restore_fails(work, capsys, "gained files or became a link")
        assert (work / "new").is_symlink() and list(elsewhere.iterdir()) == []


def test_a_file_added_between_the_last_look_and_the_rename_is_kept(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the last look, the rename itself refuses a folder with anything in it; it is not
    taken for a mount point and written into."""
    (work / "new").mkdir()
    look = copies._refuse_if_changed

    def look_then_add(target: Path, what: Any) -> None:
        look(target, what)
        (target / "notes.txt").write_text("mine")

    monkeypatch.setattr(copies, "_refuse_if_changed", look_then_add)
    monkeypatch.setattr(copies, "_move_into_mount", pytest.fail)
    restore_fails(work, capsys, "gained files or became a link")
    assert [p.name for p in (work / "new").iterdir()] == ["notes.txt"]


def rename_onto_fails(monkeypatch: pytest.MonkeyPatch, target: Path, code: int) -> None:
    """A rename onto `target` fails with `code`; every other rename is done."""
    real = os.replace

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        if Path(dst) == target:
            raise OSError(code, os.strerror(code), str(src), None, str(dst))
        real(src, dst, **kwargs)

    monkeypatch.setattr(copies.os, "replace", replace)


def test_a_rename_refused_for_another_reason_is_not_retried_file_by_file(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "new").mkdir()
    rename_onto_fails(monkeypatch, work / "new", errno.EACCES)
    monkeypatch.setattr(copies, "_move_into_mount", pytest.fail)
    restore_fails(work, capsys, "Cannot write")
    assert list((work / "new").iterdir()) == []


# an empty mount point (one rename cannot replace it), or a folder nothing beside can be written


@dataclass(frozen=True)
class Awkward:
    target: Path
    move: str  # the function of ops/copies.py that moves the staged entries in


@pytest.fixture(params=["mount point", "unwritable parent"])
def awkward(request: pytest.FixtureRequest, work: Path, monkeypatch: pytest.MonkeyPatch) -> Awkward:
    """`work/new`, an empty folder that the staged folder cannot be renamed onto, as a mount
    point (EBUSY); or one in a folder where nothing can be written, as an image's `/data`."""
    target = work / "new"
    target.mkdir()
    if request.param == "mount point":
        rename_onto_fails(monkeypatch, target, errno.EBUSY)
        return Awkward(target, "_move_into_mount")
    nothing_beside(monkeypatch, target)
    return Awkward(target, "_move_up")


def nothing_beside(monkeypatch: pytest.MonkeyPatch, target: Path) -> None:
    """Nothing can be written in the folder holding `target` (not even the lock)."""
    lock = copies.sole_lock

    def beside_refused(path: Path) -> Any:
        if Path(path).parent == target.parent:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return lock(path)

    monkeypatch.setattr(copies, "sole_lock", beside_refused)


def test_a_restore_into_an_awkward_target_is_whole(
    work: Path, awkward: Awkward, capsys: pytest.CaptureFixture[str]
) -> None:
    # a run killed while it moved entries in left its copy inside the target
    (awkward.target / ".new.partial-999999" / "indexes").mkdir(parents=True)
    code, out, err = run(
        capsys, "restore", str(work / "backup"), "--data-dir", str(awkward.target), "--json"
    )
    assert code == 0, err
    assert json.loads(out)["articles"] == 3
    assert sorted(p.name for p in awkward.target.iterdir()) == [
        "articlebot.db",
        "indexes",
        "settings.db",
    ]
    assert leftovers(work) == []
    assert listed(capsys, awkward.target, "default") == listed(capsys, work / "data", "default")


def test_nothing_writable_beside_an_absent_target_or_a_lock_held_inside_is_one_sentence(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = copies.sole_lock
    nothing_beside(monkeypatch, work / "new")
    restore_fails(work, capsys, "Cannot write")  # absent: nowhere to stage it
    assert not (work / "new").exists()
    (work / "new").mkdir()
    with lock(work / "new" / ".new.lock"):
        code, out, err = run(capsys, "restore", str(work / "backup"), "--data-dir", "new")
    assert code == 1 and ONE_SENTENCE.fullmatch(err) and "is under way" in err, err
    assert list((work / "new").iterdir()) == []


def test_a_full_mount_point_is_named_as_the_full_disk(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (work / "new").mkdir()
    rename_onto_fails(monkeypatch, work / "new", errno.EBUSY)

    def full(*args: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(copies, "_copy_file", full)
    restore_fails(work, capsys, f"The disk holding {work / 'new'} is full")
    assert list((work / "new").iterdir()) == []


class Fault:
    """Make the k-th of the move's file operations fail (copying a file, linking, renaming,
    making a folder, flushing), once; count them all."""

    NAMES = ("link", "rename", "mkdir", "fsync", "unlink")

    def __init__(self, at: int) -> None:
        self.at = at
        self.calls = 0
        self.failed = False

    def wrap(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.calls == self.at:
                self.failed = True
                raise OSError(errno.EIO, "Input/output error")
            return call(*args, **kwargs)

        return faulty

    @contextlib.contextmanager
    def armed(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
        with monkeypatch.context() as patch:
            patch.setattr(copies, "_copy_file", self.wrap(copies._copy_file))
            for name in self.NAMES:
                patch.setattr(copies.os, name, self.wrap(getattr(os, name)))
            yield


def test_a_move_failing_at_any_step_leaves_the_target_empty(
    work: Path,
    awkward: Awkward,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each step of the move in turn fails (a copy's files, folders and flushes, each entry's
    link or rename): the target is left empty, nothing is left beside or inside it, the backup
    is unchanged, and the same restore then succeeds."""
    move = getattr(copies, awkward.move)
    step = 0
    while True:
        step += 1
        fault = Fault(step)

        def moving(*args: Any, fault: Fault = fault) -> None:
            # only the move's own operations: the restore before it writes files too
            with fault.armed(monkeypatch):
                move(*args)

        monkeypatch.setattr(copies, awkward.move, moving)
        before = snapshot(work / "backup")
        try:
            restore(work / "backup", awkward.target)
        except ArticlebotError as error:
            assert fault.failed, error
            assert "\n" not in str(error) and "Cannot write" in str(error), error
            assert list(awkward.target.iterdir()) == [], step
            assert leftovers(work) == [] and snapshot(work / "backup") == before
            continue
        assert not fault.failed, step
        break
    assert step > 3  # each of the 3 entries moved up, and flushed (a copy first: more steps)
    assert listed(capsys, awkward.target, "default") == listed(capsys, work / "data", "default")


def test_a_target_that_gains_a_file_before_the_move_keeps_it(
    work: Path,
    awkward: Awkward,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A file put in the target while the restore ran (for a mount point, while the copy was
    written inside it, under a name the move is about to take) is neither replaced nor
    removed; whatever the move had put there is taken out again."""
    if awkward.move == "_move_into_mount":
        copy_tree = copies._copy_tree

        def copying(source: Path, into: int) -> None:
            copy_tree(source, into)
            (awkward.target / "settings.db").write_text("mine")

        monkeypatch.setattr(copies, "_copy_tree", copying)
    else:
        during_the_restore(monkeypatch, lambda: (awkward.target / "settings.db").write_text("mine"))
    restore_fails(work, capsys, "gained files or became a link")
    assert [p.name for p in awkward.target.iterdir()] == ["settings.db"]
    assert (awkward.target / "settings.db").read_text() == "mine"


# indexes from the store, never from the backup


def stored_vectors(data_dir: Path, collection: str = "default") -> tuple[np.ndarray, np.ndarray]:
    store = Store(DataFolder(data_dir).store)
    try:
        model = store.collection_model(collection)
        assert model is not None
        batches = list(store.iter_embeddings(collection, model[1]))
    finally:
        store.close()
    return np.concatenate([i for i, _ in batches]), np.concatenate([v for _, v in batches])


def test_a_faiss_file_with_other_vectors_is_not_what_answers(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same ids, same count, same sidecar: only the vectors are others. The restored folder
    finds each stored passage by its own vector, as the source does."""
    ids, vectors = stored_vectors(work / "data")
    (faiss_file,) = (work / "backup" / "indexes").glob("*.faiss")
    noise = np.random.default_rng(5).standard_normal(vectors.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    forged = VectorIndex.build(noise, ids, model="all-MiniLM-L6-v2", dim=vectors.shape[1])
    forged.save(faiss_file)
    reseal(work / "backup", f"indexes/{faiss_file.name}")
    reseal(work / "backup", f"indexes/{faiss_file.with_suffix('.json').name}")

    code, _, err = run(capsys, "restore", str(work / "backup"), "--data-dir", str(work / "new"))
    assert code == 0, err
    store = Store(DataFolder(work / "new").store)
    try:
        backend = EmbeddedBackend(store, "default", work / "new")
        for pid, vector in zip(ids.tolist(), vectors, strict=True):
            scores, found = backend.dense(vector, 1)
            assert found.tolist() == [pid] and scores[0] > 0.999
    finally:
        store.close()
    restored = (work / "new" / "indexes" / faiss_file.name).read_bytes()
    assert restored == (work / "data" / "indexes" / faiss_file.name).read_bytes()


def test_another_collections_keyword_index_sealed_as_this_ones_is_not_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two collections of 3 passages: `other`'s keyword index, given `default`'s ids and
    signature, put in `default`'s place and resealed. The restored `default` finds its own
    passages by their words, and nothing of `other`'s."""
    monkeypatch.chdir(tmp_path)
    lib = library(tmp_path / "data")
    others = [
        "Volcanic ash grounded flights across the archipelago while seismologists watched.",
        "The orchestra premiered a symphony written by a teenage composer from the valley.",
        "Wheat prices climbed after drought withered the harvest on the southern plains.",
    ]
    for n, (mine, theirs) in enumerate(zip(WORDS, others, strict=True)):
        lib.collection().add(Document(title=f"Harbor news {n}", paragraphs=[mine]))
        lib.collection("other").add(Document(title=f"World news {n}", paragraphs=[theirs]))
    for name in ("default", "other"):
        lib.collection(name).ask("What happened?")  # each keyword index saved
    lib.close()
    assert run(capsys, "backup", "b", "--data-dir", "data")[0] == 0

    indexes = tmp_path / "b" / "indexes"
    own = indexes / "default.bm25.npz"
    with np.load(own) as saved:
        ids, signature = saved["ids"], saved["signature"]
    with np.load(indexes / "other.bm25.npz") as saved:
        forged = {name: saved[name] for name in saved.files}
    forged["ids"], forged["signature"] = ids, signature
    with own.open("wb") as out:
        np.savez(out, **forged)
    reseal(tmp_path / "b", "indexes/default.bm25.npz")

    code, _, err = run(capsys, "restore", "b", "--data-dir", "new")
    assert code == 0, err
    store = Store(DataFolder(tmp_path / "new").store)
    try:
        keywords = EmbeddedBackend(store, "default", tmp_path / "new").keywords()
        by_id = {p.id: p.text for p in store.passages("default")}
        _, found = keywords.search(analyze("dredging storm exhibition pier bakery", "en"), 3)
        assert sorted(found.tolist()) == sorted(by_id)
        for text in WORDS:
            _, top = keywords.search(analyze(text, "en"), 1)
            assert by_id[int(top[0])] == text
        _, found = keywords.search(analyze("volcanic symphony wheat", "en"), 3)
        assert found.tolist() == []
    finally:
        store.close()
    saved_again = (tmp_path / "new" / "indexes" / "default.bm25.npz").read_bytes()
    assert saved_again == (tmp_path / "data" / "indexes" / "default.bm25.npz").read_bytes()
    source, copy = library(tmp_path / "data"), library(tmp_path / "new")
    try:
        question = "Which road did the storm close?"
        assert (
            copy.collection().ask(question).to_json() == source.collection().ask(question).to_json()
        )
    finally:
        source.close()
        copy.close()


def test_a_backup_whose_indexes_are_missing_restores_them(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(work / "backup" / "indexes")
    code, out, err = run(
        capsys, "restore", str(work / "backup"), "--data-dir", str(work / "new"), "--json"
    )
    assert code == 0, err
    assert json.loads(out)["passages"] == 3
    names = sorted(p.name for p in (work / "new" / "indexes").iterdir() if p.suffix != ".lock")
    assert names == ["default.bm25.npz", "default.faiss", "default.json"]
    code, out, _ = run(capsys, "stats", "--data-dir", str(work / "new"), "--json")
    assert code == 0 and json.loads(out)["indexed"] == json.loads(out)["passages"] == 3
