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

__all__ = ["file_lock"]


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
