"""What backup and restore share: the folder each writes, staged beside its target under a lock
and renamed into place whole, and the checks on a target (their report and checksums:
copy_report.py).

Where nothing can be written beside the target (an image's `/data` volume, whose parent is the
root), the lock and the staging folder go inside the target, an existing empty folder, and the
staged entries are moved up one at a time when all is written, as below.

One backup or restore at a time per target: a second is refused at once rather than waiting (two
restores into one folder once mixed one backup's database with the other's indexes). A kill
leaves its staging folder (`.NAME.partial-PID`) behind; the next run into that target, holding
the lock, knows no other can be writing it and removes it.

The move into place happens whole or not at all. Just before it the target is looked at again
without following links: absent or an empty folder, or the run is refused (a folder that gained
files, or became a link, while the copy was written is never written into). The move is one
rename; only where that rename cannot work, an empty mount point (EBUSY: a mount point cannot be
replaced; EXDEV: another file system), is the staged folder copied into a second staging folder
inside the target and its entries moved up one at a time, each refusing to replace anything,
every one moved back and the copy removed if any step fails: the target is left as it was.
A kill cannot be undone so: a mark (data_folder.CUT_SHORT) goes into the target before the first
entry and comes out after the last, the library refuses to open a folder that holds it, and the
next backup or restore into that target clears what the stopped one left before it begins.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from index.errors import ArticlebotError, BadInput, DiskFull, StorageError, shown
from index.storage.data_folder import CUT_SHORT, STORE
from index.storage.locking import LockHeld, sole_lock
from index.storage.sqlite_backup import held_by_a_process

__all__ = ["refuse_unless_empty", "staged"]

What = Literal["backup", "restore"]
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX


@contextlib.contextmanager
def staged(target: Path, what: What) -> Iterator[Path]:
    """A private folder beside `target` (or inside it, where nothing can be written beside it)
    to write into, moved to `target` once everything in it is written, so a run cut short (a
    kill, a full disk) leaves no half folder that looks whole. Held under the target's lock;
    errors name `target`, never the staging folder."""
    parent = target.absolute().parent
    with contextlib.ExitStack() as held:
        where = _lock(held, target, what)
        ours = frozenset() if where == parent else frozenset({_lock_name(target)})
        _remove_stale(parent, target.name)
        _clear_cut_short(target, ours)
        refuse_unless_empty(target, what, ours)
        staging = where / f".{target.name}.partial-{os.getpid()}"
        try:
            staging.mkdir(mode=0o700)
            yield staging
            if where == parent:
                _rename_into(staging, target, what)
            else:
                _move_up(staging, target, what, ours)
        except DiskFull as exc:  # met by SQLite while it wrote a copy
            raise _no_room(target) from exc
        except ArticlebotError as exc:  # a message written about a staged file names the target
            raise type(exc)(str(exc).replace(str(staging), shown(target))) from exc
        except OSError as exc:
            raise _os_error(exc, staging, target) from exc
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _lock_name(target: Path) -> str:
    return f".{target.name}.lock"


def _lock(held: contextlib.ExitStack, target: Path, what: What) -> Path:
    """Take the target's lock beside it, or inside it where nothing can be written beside it
    (it is then an existing folder); the folder the lock was taken in is where to stage."""
    parent = target.absolute().parent
    try:
        try:
            parent.mkdir(parents=True, exist_ok=True)
            held.enter_context(sole_lock(parent / _lock_name(target)))
            return parent
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            if not _is_real_folder(target):
                raise
        held.enter_context(sole_lock(target.absolute() / _lock_name(target)))
        return target.absolute()
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


def _remove_stale(parent: Path, name: str) -> None:
    """The staging folders of runs into this target that were killed (under the lock, none is
    being written): beside the target, and inside it (a move into a mount point cut short)."""
    prefix = f".{name}.partial-"
    inside = parent / name
    folders = [parent, inside] if inside.is_dir() and not inside.is_symlink() else [parent]
    for folder in folders:
        for stale in folder.iterdir():
            if not (stale.name.startswith(prefix) and stale.name[len(prefix) :].isdigit()):
                continue  # another target's, or a name that only looks alike
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)


def refuse_unless_empty(path: Path, what: What, ours: frozenset[str] = frozenset()) -> None:
    """Refuse a target that is a file, a link or a folder holding anything but `ours` (the lock
    this run holds inside it)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        raise BadInput(f"{shown(path)} is a file; give a new or empty folder to {what} into.")
    if not path.is_dir() or all(p.name in ours for p in path.iterdir()):
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
    disk = target if _is_real_folder(target) else target.absolute().parent  # a mount point's own
    return DiskFull(
        f"The disk holding {shown(disk)} is full, so {shown(target)} was not "
        "written (nothing half written is left); free some space there or choose a folder on "
        "another disk."
    )


def _rename_into(staging: Path, target: Path, what: What) -> None:
    """`staging` moved to `target` whole, or `target` left as it was and the error raised."""
    _refuse_if_changed(target, what)
    try:
        os.replace(staging, target)  # replaces an empty folder too, never a link or a full one
        return
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise _changed(target, what) from None  # since the look just above
        if exc.errno not in (errno.EBUSY, errno.EXDEV) or not _is_real_folder(target):
            raise
    _move_into_mount(staging, target, what)


def _is_real_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return False


def _refuse_if_changed(target: Path, what: What) -> None:
    """Refuse unless `target` is absent or an empty folder, looked at without following a link."""
    try:
        fd = os.open(target, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except FileNotFoundError:
        return
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a link, or a file
            raise _changed(target, what) from None
        raise
    try:
        if os.listdir(fd):
            raise _changed(target, what)
    finally:
        os.close(fd)


def _changed(target: Path, what: What) -> BadInput:
    again = (
        "restore into a new or empty folder (--data-dir)"
        if what == "restore"
        else "give a new or empty folder for the backup"
    )
    return BadInput(
        f"{shown(target)} gained files or became a link while the {what} ran, so nothing was "
        f"written there; {again}."
    )


def _move_into_mount(staging: Path, target: Path, what: What) -> None:
    """Where `target` is an empty mount point: `staging` copied into a folder inside it, then
    each entry moved up, never replacing anything; on any failure every entry moved is put back
    and the copy removed, so `target` is left empty."""
    inner = staging.name
    top = os.open(target, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    made = False
    try:
        if os.listdir(top):
            raise _changed(target, what)
        os.mkdir(inner, 0o700, dir_fd=top)
        made = True
        held = os.open(inner, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=top)
        try:
            _copy_tree(staging, held)
            _move_entries(held, top, inner, frozenset(), target, what)
        finally:
            os.close(held)
    finally:
        if made:
            shutil.rmtree(inner, dir_fd=top, ignore_errors=True)
        os.close(top)


def _move_up(staging: Path, target: Path, what: What, ours: frozenset[str]) -> None:
    """`staging`, a folder inside `target`, emptied into `target` (whose other entries can only
    be `ours`), or `target` left as it was; the emptied folder is removed by the caller."""
    try:
        top = os.open(target, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):  # a link, a file, moved away
            raise _changed(target, what) from None
        raise
    try:
        held = os.open(staging.name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=top)
        try:
            _move_entries(held, top, staging.name, ours, target, what)
        finally:
            os.close(held)
    finally:
        os.close(top)


def _move_entries(
    held: int, top: int, inner: str, ours: frozenset[str], target: Path, what: What
) -> None:
    """Every entry of the folder open as `held` (named `inner` in `top`) moved up into `top`,
    which holds nothing else but `ours`; on any failure each one moved is put back."""
    if set(os.listdir(top)) - ours != {inner}:
        raise _changed(target, what)
    # The mark goes in first and comes out last: a kill between leaves a folder that says it is
    # half written, which no one opens and the next run into it clears (_clear_cut_short).
    mark = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
    moved: list[str] = []
    try:
        os.close(os.open(CUT_SHORT, mark, 0o600, dir_fd=top))
        os.fsync(top)
        for name in sorted(os.listdir(held)):
            _move_without_replacing(name, held, top, target, what)
            moved.append(name)
        os.fsync(top)
        os.unlink(CUT_SHORT, dir_fd=top)
        os.fsync(top)
    except BaseException:
        for name in reversed(moved):
            _put_back(name, top, held)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(CUT_SHORT, dir_fd=top)
        raise


def _clear_cut_short(target: Path, ours: frozenset[str]) -> None:
    """What a move into `target` that was stopped partway left (under the lock, no run is
    writing it): every entry but this run's lock, the mark last. The move began only into a
    folder that held nothing else, so nothing else is there to keep."""
    if not _is_real_folder(target) or not (target / CUT_SHORT).exists():
        return
    for entry in target.iterdir():
        if entry.name in ours or entry.name == CUT_SHORT:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    (target / CUT_SHORT).unlink()


def _copy_tree(source: Path, into: int) -> None:
    """The files and folders under `source` written into the folder open as `into`, each
    created anew (never through a link) and flushed to disk."""
    with os.scandir(source) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                os.mkdir(entry.name, 0o700, dir_fd=into)
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=into)
                try:
                    _copy_tree(Path(entry.path), sub)
                    os.fsync(sub)
                finally:
                    os.close(sub)
            elif entry.is_file(follow_symlinks=False):
                _copy_file(Path(entry.path), entry.name, into)
            else:  # the staging folder holds only what this run wrote
                raise OSError(errno.EINVAL, "not a plain file", entry.path)


def _copy_file(source: Path, name: str, into: int) -> None:
    src = os.open(source, os.O_RDONLY | _NOFOLLOW)
    try:
        mode = stat.S_IMODE(os.fstat(src).st_mode)
        out = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode, dir_fd=into)
        with os.fdopen(src, "rb", closefd=False) as reader, os.fdopen(out, "wb") as writer:
            shutil.copyfileobj(reader, writer, 1 << 20)
            writer.flush()
            os.fsync(out)
    finally:
        os.close(src)


def _move_without_replacing(name: str, src: int, dst: int, target: Path, what: What) -> None:
    """`name` moved from the folder open as `src` to the one open as `dst`, refused if `dst`
    holds that name already: a file by a hard link (which never replaces), a folder by a rename
    just after looking (a rename fails on a link, a file or a folder with anything in it)."""
    if not stat.S_ISDIR(os.stat(name, dir_fd=src, follow_symlinks=False).st_mode):
        try:
            os.link(name, name, src_dir_fd=src, dst_dir_fd=dst, follow_symlinks=False)
        except FileExistsError:
            raise _changed(target, what) from None
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            # a file system without hard links: look, then rename
        else:
            try:
                os.unlink(name, dir_fd=src)
            except OSError:
                os.unlink(name, dir_fd=dst)  # the link taken back: the target as it was
                raise
            return
    try:
        os.stat(name, dir_fd=dst, follow_symlinks=False)
    except FileNotFoundError:
        pass
    else:
        raise _changed(target, what)
    try:
        os.rename(name, name, src_dir_fd=src, dst_dir_fd=dst)
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
            raise _changed(target, what) from None
        raise


def _put_back(name: str, top: int, held: int) -> None:
    """An entry moved into the target taken out again (into the copy, which is then removed)."""
    try:
        os.rename(name, name, src_dir_fd=top, dst_dir_fd=held)
    except OSError:
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.stat(name, dir_fd=top, follow_symlinks=False).st_mode):
                shutil.rmtree(name, dir_fd=top)
            else:
                os.unlink(name, dir_fd=top)
