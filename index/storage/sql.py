"""Where the bot's own small tables live (conversations, votes, a collection's settings): a
SQLite file in the data folder here, the library's PostgreSQL database through storage/postgres/.

The tables' owners write one SQL for both: `?` placeholders, and only what both dialects read
alike (`ON CONFLICT ... DO UPDATE`, `RETURNING`). Each `transaction` commits as one, or not at
all; its `execute` returns the rows a statement gives (none for a plain write).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from index.storage.sqlite_file import storage_error

__all__ = ["Database", "SqliteDatabase", "Statements", "copy_rows"]


class Statements(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...


class Database(Protocol):
    def transaction(self) -> contextlib.AbstractContextManager[Statements]: ...

    def close(self) -> None: ...


class SqliteDatabase:
    """One SQLite file, its tables created on opening if they are missing."""

    def __init__(
        self,
        path: Path,
        schema: str,
        added_columns: Sequence[tuple[str, str, str]] = (),
    ) -> None:
        """`added_columns`: (table, column, type) declared after a file could have been made,
        added to one that lacks them."""
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # One connection shared by the event loop and worker threads, one transaction at a time.
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.executescript(schema)
            for table, column, kind in added_columns:
                have = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                if column not in have:
                    self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            self._db.commit()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Statements]:
        try:
            with self._lock, self._db:
                yield _SqliteStatements(self._db)
        except sqlite3.Error as exc:  # a full disk, a damaged file: one sentence, as the store's
            error = storage_error(exc, self.path)
            if error is None:
                raise
            raise error from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _SqliteStatements:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._db.execute(sql, params).fetchall()


def copy_rows(source: Database, target: Database, table: str, columns: list[str]) -> int:
    """Copy a table's rows to the same table elsewhere, in one transaction; rows whose key is
    there already are left as they are. Returns how many rows were read."""
    names = ", ".join(columns)
    with source.transaction() as read:
        rows = read.execute(f"SELECT {names} FROM {table}")
    marks = ", ".join("?" * len(columns))
    with target.transaction() as write:
        for row in rows:
            write.execute(
                f"INSERT INTO {table} ({names}) VALUES ({marks}) ON CONFLICT DO NOTHING", row
            )
    return len(rows)
