"""The SQLite file under the store: opening it (private to its owner, in WAL mode, its schema
brought up to date), the one connection and lock the bot's threads share, write transactions that
take the write lock up front, and SQLite's failures turned into a StorageError that says what to
do. The store's tables are read and written by the classes built on `SqliteFile`.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

from index.errors import DiskFull, StorageError
from index.storage.sqlite_schema import migrate

__all__ = ["SqliteFile", "disk_full", "locked", "storage_error", "timestamp"]

log = logging.getLogger(__name__)


F = TypeVar("F", bound=Callable[..., Any])


def locked(method: F) -> F:
    """One connection is shared by the bot's worker threads; a lock keeps transactions whole.

    SQLite's own failures (a full disk, a lock held past the busy timeout, a damaged file) become
    a StorageError whose message says what to do, instead of a traceback.
    """

    @functools.wraps(method)
    def wrapper(self: SqliteFile, *args: Any, **kwargs: Any) -> Any:
        try:
            with self._lock:
                return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            error = storage_error(exc, self.path)
            if error is None:
                raise
            raise error from exc

    return cast(F, wrapper)


_BUSY = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
_DAMAGED = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
_NO_ACCESS = (
    sqlite3.SQLITE_READONLY,
    sqlite3.SQLITE_CANTOPEN,
    sqlite3.SQLITE_IOERR,
    sqlite3.SQLITE_PERM,
)


def _code(exc: sqlite3.Error) -> int:
    return int(getattr(exc, "sqlite_errorcode", 0) or 0) & 0xFF  # primary code of extended ones


def storage_error(exc: sqlite3.Error, path: Path) -> StorageError | None:
    """The user-facing error for one of SQLite's; None for the rest (bugs, to show as they are)."""
    code = _code(exc)
    if code in _BUSY:
        return StorageError(
            "Another process kept the database busy for too long; try again in a minute."
        )
    if code == sqlite3.SQLITE_FULL:
        return disk_full(path.parent)
    if code in _DAMAGED:
        return StorageError(
            f"{path} is damaged or not an articlebot database; restore it from a backup or "
            "set another data folder (--data-dir or ARTICLEBOT_DATA_DIR)."
        )
    if code in _NO_ACCESS:
        return StorageError(
            f"Cannot read or write {path}; check the data folder's permissions and free space."
        )
    return None


def disk_full(folder: Path) -> DiskFull:
    """The one sentence for a full disk, whichever write met it (SQLite, an index, a file)."""
    return DiskFull(
        f"The disk holding {folder} is full; free some space there and try again (what was "
        "stored before is kept, and questions are still answered)."
    )


def _full(path: Path) -> bool:
    """Whether the filesystem holding `path` has no room left for SQLite's shared memory."""
    try:
        return shutil.disk_usage(path.parent).free < 64 * 1024
    except OSError:
        return False


def timestamp() -> str:
    """Now, as the store writes times: UTC, ISO 8601, to the second."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class SqliteFile:
    """The SQLite file of one data folder, opened, its schema brought up to date."""

    def __init__(self, path: Path, busy_timeout_s: float = 60.0) -> None:
        self.path = path
        self._lock = threading.RLock()
        try:
            # Private to the user running the bot: it holds every server's articles and who
            # added them. A folder that already exists keeps the permissions its owner chose.
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not path.exists():
                # SQLite gives its -wal and -shm files the database file's permissions.
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as exc:
            raise StorageError(
                f"Cannot create the data folder {path.parent} ({exc.strerror}); "
                "set another one (--data-dir or ARTICLEBOT_DATA_DIR)."
            ) from exc
        try:
            try:
                self._open(busy_timeout_s, alone=False)
            except sqlite3.Error as exc:
                if _code(exc) not in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL) or not _full(path):
                    raise
                # The disk is full and no process has the database open, so SQLite cannot make
                # the shared-memory file (-shm, 32 kB) every connection to a WAL database maps.
                # Opened in exclusive locking mode, it keeps that index in this process's memory
                # instead: questions are answered; other processes wait until this one ends.
                log.warning(
                    "The disk holding %s is full: the database is opened for this process alone "
                    "(other processes wait) until it is opened again with room.",
                    path.parent,
                )
                self._open(busy_timeout_s, alone=True)
        except sqlite3.Error as exc:
            error = storage_error(exc, path)
            if error is None:
                raise
            raise error from exc

    def _open(self, busy_timeout_s: float, *, alone: bool) -> None:
        db = self._db = sqlite3.connect(
            self.path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            db.row_factory = sqlite3.Row
            if alone:
                db.execute("PRAGMA locking_mode=EXCLUSIVE")  # before WAL is entered: no -shm
            self._enable_wal(busy_timeout_s)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except BaseException:
            db.close()
            raise

    @locked
    def close(self) -> None:
        self._db.close()

    def _enable_wal(self, timeout_s: float) -> None:
        # Turning a new database to WAL takes an exclusive lock, and SQLite fails at once instead
        # of calling the busy handler: two processes creating one data folder together would see
        # "database is locked". Wait for our turn as the busy timeout would.
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if _code(exc) not in _BUSY or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @contextlib.contextmanager
    def _write(self) -> Iterator[None]:
        """One write transaction. BEGIN IMMEDIATE takes the write lock up front (waiting up to
        the busy timeout), so a transaction never fails halfway for want of the lock."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
            self._db.execute("COMMIT")
        except BaseException:
            if self._db.in_transaction:  # SQLite may have rolled back already (full disk)
                self._db.execute("ROLLBACK")
            raise

    def _migrate(self) -> None:
        # Under the write lock, so two fresh processes never both create the schema.
        with self._write():
            migrate(self._db)
