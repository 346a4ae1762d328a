"""What backup and restore share: the folder each writes, staged beside its target under a lock
and renamed into place whole; the checks on a target; checksums and the report.

One backup or restore at a time per target: a second is refused at once rather than waiting (two
restores into one folder once mixed one backup's database with the other's indexes). A kill
leaves its staging folder (`.NAME.partial-PID`) behind; the next run into that target, holding
the lock, knows no other can be writing it and removes it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from index.errors import ArticlebotError, BadInput, DiskFull, StorageError, shown
from index.storage.data_folder import STORE
from index.storage.locking import LockHeld, sole_lock
from index.storage.sqlite_backup import held_by_a_process

__all__ = ["CopyResult", "folder_size", "release", "sha256", "staged"]

What = Literal["backup", "restore"]


@dataclass(frozen=True)
class CopyResult:
    """What a backup wrote or a restore put back; `--json` names the folder by `key`."""

    key: str  # "backup" or "restored"
    folder: Path
    articles: int
    passages: int
    bytes: int
    collections: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            self.key: str(self.folder),
            "articles": self.articles,
            "passages": self.passages,
            "bytes": self.bytes,
        }


def release() -> str:
    try:
        return metadata.version("articlebot")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


@contextlib.contextmanager
def staged(target: Path, what: What) -> Iterator[Path]:
    """A private folder beside `target` to write into, renamed to `target` once everything in
    it is written, so a run cut short (a kill, a full disk) leaves no half folder that looks
    whole. Held under the target's lock; errors name `target`, never the staging folder."""
    parent = target.absolute().parent
    with contextlib.ExitStack() as held:
        try:
            parent.mkdir(parents=True, exist_ok=True)
            held.enter_context(sole_lock(parent / f".{target.name}.lock"))
        except LockHeld:
            raise BadInput(
                f"Another {what} into {shown(target)} is under way; wait for it to end, then "
                f"{what} into a new or empty folder."
            ) from None
        except OSError as exc:
            raise StorageError(
                f"Cannot write {shown(target)} ({exc.strerror or exc}); give a folder in a place "
                "you can write to."
            ) from None
        _remove_stale(parent, target.name)
        refuse_unless_empty(target, what)
        staging = parent / f".{target.name}.partial-{os.getpid()}"
        try:
            staging.mkdir(mode=0o700)
            yield staging
            _rename_into(staging, target)
        except DiskFull as exc:  # met by SQLite while it wrote a copy
            raise _no_room(target) from exc
        except ArticlebotError as exc:  # a message written about a staged file names the target
            raise type(exc)(str(exc).replace(str(staging), shown(target))) from exc
        except OSError as exc:
            raise _os_error(exc, staging, target) from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _remove_stale(parent: Path, name: str) -> None:
    """The staging folders of runs into this target that were killed (under the lock, none is
    being written)."""
    prefix = f".{name}.partial-"
    for stale in parent.iterdir():
        if not (stale.name.startswith(prefix) and stale.name[len(prefix) :].isdigit()):
            continue  # another target's, or a name that only looks alike
        if stale.is_dir() and not stale.is_symlink():
            shutil.rmtree(stale, ignore_errors=True)
        else:
            stale.unlink(missing_ok=True)


def refuse_unless_empty(path: Path, what: What) -> None:
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise BadInput(f"{shown(path)} is a file; give a new or empty folder to {what} into.")
    if not path.is_dir() or not any(path.iterdir()):
        return
    if what == "restore" and held_by_a_process(path / STORE):
        raise BadInput(
            f"{shown(path)} is the data folder of a running articlebot (the bot or a command); "
            "stop it, then restore into a new or empty folder."
        )
    if what == "restore":
        raise BadInput(
            f"{shown(path)} is not empty; restore into a new or empty folder (--data-dir), or "
            "move its files away first."
        )
    raise BadInput(f"{shown(path)} is not empty; give a new or empty folder for the backup.")


def _os_error(exc: OSError, staging: Path, target: Path) -> ArticlebotError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return _no_room(target)
    culprit = Path(exc.filename) if exc.filename else None
    if culprit is not None and not culprit.absolute().is_relative_to(staging):
        # A file read (the data folder's, the backup's) is not the destination's fault.
        return StorageError(
            f"Cannot read {shown(culprit)} ({exc.strerror or exc}); check its permissions."
        )
    return StorageError(
        f"Cannot write {shown(target)} ({exc.strerror or exc}); check the folder's permissions."
    )


def _no_room(target: Path) -> DiskFull:
    return DiskFull(
        f"The disk holding {shown(target.absolute().parent)} is full, so {shown(target)} was not "
        "written (nothing half written is left); free some space there or choose a folder on "
        "another disk."
    )


def _rename_into(staging: Path, target: Path) -> None:
    try:
        os.replace(staging, target)  # replaces an empty folder too
    except OSError:  # an empty mount point, say: move what is inside instead
        for entry in staging.iterdir():
            os.replace(entry, target / entry.name)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
