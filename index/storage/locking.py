"""A lock between processes that share a data folder (the bot and a CLI, or two CLIs).

SQLite serializes writers by itself; the FAISS file is ours to guard. Without a lock two
processes that each bring the index up to date and save it race, and the last to write may drop
the other's vectors (harmless, since opening repairs it from SQLite, but `stats` would show the
gap). `flock` is released by the kernel when the holder dies, so a `kill -9` never leaves a
stale lock behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no flock; one process at a time per data folder there
    fcntl = None  # type: ignore[assignment]

__all__ = ["LockHeld", "file_lock", "sole_lock"]


class LockHeld(Exception):
    """Another process holds the lock."""


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (created if missing) for the duration of the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


@contextmanager
def sole_lock(path: Path) -> Iterator[None]:
    """Hold `path`'s lock, or raise LockHeld at once when another process holds it; the file
    is removed when the block ends, so that nothing is left beside what the lock guarded.

    Removing a lock file races with a process that opened it just before: that process would
    lock the removed file while a third locks a new one. So a lock counts only when the file
    locked is still the one at `path`; otherwise it is taken again, on the new file.
    """
    for _ in range(100):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.path.samestat(os.fstat(fd), os.stat(path, follow_symlinks=False)):
                break
        except BlockingIOError:
            os.close(fd)
            raise LockHeld(str(path)) from None
        except FileNotFoundError:  # removed by its last holder since we opened it
            pass
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    else:
        raise LockHeld(str(path))
    try:
        yield
    finally:
        try:
            os.unlink(path)  # while still held, so no one holds the file removed
        finally:
            os.close(fd)
