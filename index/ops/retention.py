"""`articlebot backup DIR --keep N`: a new dated backup inside DIR, and the oldest beyond N removed.

What a timer runs every day. Only folders this command made are ever removed: a folder of DIR
counts as one of its backups when its name is a backup's dated name (`articlebot-` and the time
in UTC) and it holds a manifest that restore can read. Anything else in DIR (an operator's own
copy, a backup of another tool, a folder that only looks alike, a link) is left as it is and is
not counted among the N. The new backup is written (staged and renamed into place, as every
backup is) before any old one is removed, so a run that fails removes nothing.

A run that is killed (SIGKILL, a machine that loses power; SIGTERM is caught and cleans up,
index/cli/backup.py) leaves what it was writing: its staging folder, a whole copy of the data
folder (`.articlebot-<stamp>.partial-<pid>`), and its lock files. Each dated backup has a name
of its own, so no later run into the same name would find them: every run first removes the
leftovers whose writer is gone, which it knows by taking their backup's lock (a writer holds it
until its folder is renamed into place). An old backup is renamed to such a name before it is
removed, so a removal cut short is finished by the next run too.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from index.errors import ArticlebotError, BadInput, StorageError, shown
from index.ops.copy_report import CopyResult
from index.ops.manifest import read_manifest
from index.storage.locking import LockHeld, sole_lock

__all__ = ["DATED_NAME", "Rotation", "backups_in", "remove_leftovers", "rotate"]

# articlebot-20261206T031500Z, with -2, -3... when two runs start in the same second.
DATED_NAME = re.compile(r"articlebot-\d{8}T\d{6}Z(?:-\d+)?")
# What writing one leaves beside it until it is renamed into place (index/ops/copies.py).
LEFTOVER = re.compile(rf"\.(?P<name>{DATED_NAME.pattern})\.(?:lock|partial-\d+)")
ROTATION_LOCK = ".articlebot-backups.lock"


@dataclass(frozen=True)
class Rotation:
    """The backup written and the old ones removed to keep the number asked for."""

    made: CopyResult
    removed: list[Path]
    kept: list[Path]


def rotate(parent: Path, keep: int, make: Callable[[Path], CopyResult]) -> Rotation:
    """Write a new backup into `parent` through `make(dest)`, then keep the newest `keep`."""
    if keep < 1:
        raise BadInput("--keep must be 1 or more, the number of backups kept in the folder.")
    if parent.is_symlink() or (parent.exists() and not parent.is_dir()):
        raise BadInput(f"{shown(parent)} is not a folder; give a folder to keep the backups in.")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"Cannot make {shown(parent)} ({exc.strerror or exc}); give a folder you can write to."
        ) from None
    with contextlib.ExitStack() as held:
        try:
            # One rotation at a time: two timers' runs must not each remove what the other kept.
            held.enter_context(sole_lock(parent / ROTATION_LOCK))
        except LockHeld:
            raise BadInput(
                f"Another `articlebot backup --keep` into {shown(parent)} is under way; wait for "
                "it to end."
            ) from None
        remove_leftovers(parent)  # first: each is a whole copy, room the new one may need
        made = make(_new_name(parent))
        ours = backups_in(parent)
        old = [p for p in ours[:-keep] if p != made.folder]
        removed = []
        for path in old:
            where = path
            try:
                # A leftover's name first, so that a kill part way through the removal leaves
                # what the next run removes, not a backup with files missing.
                doomed = path.with_name(f".{path.name}.partial-{os.getpid()}")
                os.rename(path, doomed)
                where = doomed
                shutil.rmtree(doomed)
            except OSError as exc:
                raise StorageError(
                    f"The new backup {shown(made.folder)} is written, but {shown(where)} could "
                    f"not be removed ({exc.strerror or exc}); remove it by hand."
                ) from None
            removed.append(path)
        kept = [p for p in ours if p not in removed]
    return Rotation(made, removed, kept)


def remove_leftovers(parent: Path) -> list[Path]:
    """The staging folders and lock files that killed runs left in `parent`, removed: those of
    each dated backup whose lock no process holds. A backup being written is left alone."""
    removed = []
    names = sorted({m["name"] for p in parent.iterdir() if (m := LEFTOVER.fullmatch(p.name))})
    for name in names:
        lock = parent / f".{name}.lock"
        had_lock = lock.exists()
        try:
            with sole_lock(lock):  # removed when released: the lock file goes too
                for stale in sorted(parent.glob(f".{name}.partial-*")):
                    if not LEFTOVER.fullmatch(stale.name):
                        continue  # a name that only looks alike
                    if stale.is_dir() and not stale.is_symlink():
                        shutil.rmtree(stale)
                    else:
                        stale.unlink()
                    removed.append(stale)
        except LockHeld:
            continue  # its writer is alive
        except OSError:
            continue  # a link in the lock's place, a file that will not go: not ours to force
        if had_lock:
            removed.append(lock)
    return removed


def backups_in(parent: Path) -> list[Path]:
    """The backups this command made in `parent`, oldest first."""
    found = []
    for path in parent.iterdir():
        if not DATED_NAME.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
            continue
        try:
            read_manifest(path)
        except ArticlebotError:
            continue  # not a backup, or a damaged one: not ours to remove
        found.append(path)
    return sorted(found, key=_order)


def _order(path: Path) -> tuple[str, int]:
    stamp, _, suffix = path.name.removeprefix("articlebot-").partition("-")
    return stamp, int(suffix or 1)


def _new_name(parent: Path) -> Path:
    """A name that sorts after every backup of this second still there (the newest is never
    removed): two runs in one second must not make a newer backup look older."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    taken = [
        _order(p)[1]
        for p in parent.iterdir()
        if DATED_NAME.fullmatch(p.name) and p.name.startswith(f"articlebot-{stamp}")
    ]
    if not taken:
        return parent / f"articlebot-{stamp}"
    return parent / f"articlebot-{stamp}-{max(taken) + 1}"
