"""SQLite files copied while other processes read and write them, and checked once copied.

A live database in WAL mode is not one file: what is committed may still be in its `-wal`, so a
plain `cp` can give a copy torn between two commits. SQLite's online backup API reads the
database as one read transaction sees it, pages from the file and the WAL alike, so the copy is
one committed state; writers go on meanwhile (WAL readers never block them). The copy is left
in rollback-journal mode: one self-contained file, with no `-wal` beside it to lose.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from index.errors import StorageError
from index.storage.schema_check import schema_problem
from index.storage.sqlite_file import storage_error

__all__ = [
    "collection_counts",
    "copy_database",
    "held_by_a_process",
    "integrity",
    "is_database",
    "restored_problem",
    "schema_version",
    "table_counts",
]

_MAGIC = b"SQLite format 3\x00"
_FLOCK = "hhqqi4x"  # struct flock: l_type, l_whence, l_start, l_len, l_pid

try:
    import fcntl
except ImportError:  # Windows: no POSIX locks to look at
    fcntl = None  # type: ignore[assignment]


def is_database(path: Path) -> bool:
    """Whether `path` is an SQLite database file (by its header, not its name)."""
    try:
        with path.open("rb") as f:
            return f.read(len(_MAGIC)) == _MAGIC
    except OSError:
        return False


@contextlib.contextmanager
def _opened(
    path: Path, *, readonly: bool = True, seconds: float | None = None
) -> Iterator[sqlite3.Connection]:
    """A connection to `path`; with `seconds`, every statement on it is interrupted once that
    long has passed since it was opened (a restored file's queries are bounded in time)."""
    uri = f"{path.resolve().as_uri()}?mode={'ro' if readonly else 'rw'}"
    try:
        db = sqlite3.connect(uri, uri=True, timeout=60.0, isolation_level=None)
    except sqlite3.Error as exc:
        raise _error(exc, path) from exc
    try:
        if seconds is not None:
            deadline = time.monotonic() + seconds
            # Called every 10,000 of SQLite's steps; a true answer interrupts the statement.
            db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
            # Functions named in a schema run only if SQLite deems them harmless.
            db.execute("PRAGMA trusted_schema=OFF")
        yield db
    except sqlite3.OperationalError as exc:
        if seconds is not None and "interrupted" in str(exc):
            raise StorageError(
                f"Reading {path} took longer than {seconds:.0f} s, far longer than a database of "
                "its size needs; restore from another backup."
            ) from exc
        raise _error(exc, path) from exc
    except sqlite3.Error as exc:
        raise _error(exc, path) from exc
    finally:
        db.close()


def _error(exc: sqlite3.Error, path: Path) -> Exception:
    return storage_error(exc, path) or exc


def copy_database(source: Path, target: Path) -> None:
    """A consistent copy of a live database at `target` (a new file, private to its owner)."""
    os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    # The source is opened as the store opens it (not read-only), so that the last connection
    # to close tidies its -wal and -shm away as usual instead of leaving them behind.
    with _opened(source, readonly=False) as src, _opened(target, readonly=False) as dst:
        # pages=-1: the whole database in one step, under one read transaction, so the copy
        # is one committed state however the writers go on (a stepwise copy restarts on writes).
        src.backup(dst, pages=-1)
        dst.execute("PRAGMA journal_mode=DELETE")


def integrity(path: Path) -> str:
    """`PRAGMA integrity_check`'s verdict: "ok", or what is wrong, one problem a line."""
    with _opened(path) as db:
        return "\n".join(str(row[0]) for row in db.execute("PRAGMA integrity_check"))


def schema_version(path: Path) -> int:
    with _opened(path) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


def table_counts(path: Path) -> dict[str, int]:
    """The rows of each table, by name."""
    with _opened(path) as db:
        names = [
            str(r[0])
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        ]
        return {n: int(db.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0]) for n in names}


def collection_counts(path: Path, seconds: float | None = None) -> dict[str, tuple[int, int]]:
    """(articles, passages) of each collection of an article store's file."""
    with _opened(path, seconds=seconds) as db:
        articles = dict(db.execute("SELECT collection, COUNT(*) FROM articles GROUP BY 1"))
        passages = dict(db.execute("SELECT collection, COUNT(*) FROM passages GROUP BY 1"))
    return {
        str(name): (int(articles.get(name, 0)), int(passages.get(name, 0)))
        for name in sorted(set(articles) | set(passages))
    }


def check_seconds(path: Path) -> float:
    """How long the checks of a restored file may take: a minute, and a second for every 5 MB
    (a 300 MB store is checked in a few seconds; far past this, something in it is wrong)."""
    return 60.0 + path.stat().st_size / 5e6


def restored_problem(
    path: Path, name: str, version: int, tables: dict[str, int] | None = None
) -> str | None:
    """What is wrong with a restored database file (the data folder's `name`), or None: its
    schema and `user_version` against the release's declarations (before any row is read), then
    SQLite's integrity check, then the rows of its tables against `tables`, when given; every
    statement bounded in time."""
    with path.open("rb") as f:
        header = f.read(100)
    if len(header) < 100 or header[:16] != _MAGIC:
        return "is not an SQLite database"
    if header[18:20] != b"\x01\x01":  # a backup's copy is in rollback-journal mode, self-contained
        return "is not a self-contained copy (it is in WAL mode)"
    with _opened(path, seconds=check_seconds(path)) as db:
        found = int(db.execute("PRAGMA user_version").fetchone()[0])
        if found != version:
            return f"is at schema version {found}, where its manifest says {version}"
        problem = schema_problem(db, name, version)
        if problem is not None:
            return f"holds {problem}"
        verdict = [str(row[0]) for row in db.execute("PRAGMA integrity_check")]
        if verdict != ["ok"]:
            return f"fails SQLite's integrity check ({verdict[0]})"
        if tables is not None:
            # The names are the declared tables' (the schema matched), each quoted regardless.
            found_rows = {
                table: int(db.execute(f'SELECT COUNT(*) FROM "{table}"').fetchone()[0])
                for (table,) in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                ).fetchall()
            }
            if found_rows != tables:
                return "does not hold the rows its manifest counts"
    return None


def held_by_a_process(path: Path) -> bool:
    """Whether a process has the database at `path` open (the bot, a command).

    Every connection to a WAL database holds a shared lock on one byte of its `-shm` file (the
    "DMS" byte, offset 128) for as long as it is open; asking whether a write lock on that byte
    would be granted names a holder, without taking anything.
    """
    shm = path.with_name(path.name + "-shm")
    if fcntl is None or not sys.platform.startswith("linux") or not shm.exists():
        return False  # struct flock's layout below is Linux's
    try:
        fd = os.open(shm, os.O_RDONLY)
    except OSError:
        return False
    try:
        query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 128, 1, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        return bool(struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK)
    except OSError:
        return False
    finally:
        os.close(fd)
