"""A restore happens whole or not at all:

- a target that gains a file or becomes a link while the restore runs is never written into;
- the move into an empty mount point (one rename cannot replace it), or into a folder nothing
  beside can be written (an image's `/data`), fails at any step with the target left empty,
  nothing half written beside or inside it, and the backup as it was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hostile_backups import ONE_SENTENCE, snapshot
from restored_folders import listed, run

from index.errors import ArticlebotError
from index.ops import copies
from index.ops import restore as restoring
from index.ops.restore import restore
from index.storage.data_folder import CUT_SHORT


def leftovers(work: Path) -> list[str]:
    """Staging folders and locks of the restore into `work/new`, beside it or inside it."""
    found = [p.name for p in work.iterdir() if p.name.startswith(".new.")]
    new = work / "new"
    if new.is_dir() and not new.is_symlink():
        found += [f"new/{p.name}" for p in new.iterdir() if p.name.startswith(".new.")]
    return found


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


def test_a_restore_killed_while_it_moves_entries_in_is_never_opened_and_is_cleared(
    work: Path, awkward: Awkward, capsys: pytest.CaptureFixture[str]
) -> None:
    """A restore killed (SIGKILL: nothing of it runs after) with one of its entries moved into
    the target: the half folder is refused with one sentence that says to restore again, and
    that restore gives the whole data folder."""
    move = copies._move_without_replacing
    moved: list[str] = []

    def killed_after_the_first(name: str, *args: Any) -> None:
        move(name, *args)
        moved.append(name)
        os.kill(os.getpid(), signal.SIGKILL)

    child = os.fork()
    if child == 0:  # the restore, in a process of its own that is killed partway
        try:
            copies._move_without_replacing = killed_after_the_first  # type: ignore[assignment]
            restore(work / "backup", awkward.target)
        finally:
            os._exit(3)
    _, status = os.waitpid(child, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    assert (awkward.target / CUT_SHORT).exists() and (awkward.target / "articlebot.db").exists()
    code, out, err = run(capsys, "list", "--data-dir", str(awkward.target))
    assert code == 1 and out == "" and ONE_SENTENCE.fullmatch(err), err
    assert "stopped partway" in err and "restore" in err
    code, out, err = run(capsys, "restore", str(work / "backup"), "--data-dir", str(awkward.target))
    assert code == 0, err
    assert sorted(p.name for p in awkward.target.iterdir()) == [
        "articlebot.db",
        "indexes",
        "settings.db",
    ]
    assert leftovers(work) == []
    assert listed(capsys, awkward.target, "default") == listed(capsys, work / "data", "default")
