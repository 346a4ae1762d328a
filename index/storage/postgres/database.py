"""The bot's own small tables (conversations, votes, a collection's settings: sql.py) in the
store's database: their SQL, written once for SQLite and PostgreSQL alike, run in transactions on
connections of the store's pool."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from index.storage.postgres.store import PgStore

__all__ = ["PgDatabase"]


class PgDatabase:
    """The store's database for the bot's own tables (sql.py): their SQL as written for SQLite,
    each transaction on a connection of the store's pool."""

    def __init__(self, store: PgStore) -> None:
        self._store = store

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_PgStatements]:
        with self._store._conn() as db, db.transaction():
            yield _PgStatements(db)

    def close(self) -> None:
        pass  # the pool is the store's, closed with the library


class _PgStatements:
    def __init__(self, db: psycopg.Connection[Any]) -> None:
        self._db = db

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        # The shared SQL uses `?` and never a literal `?` or `%`.
        cursor = self._db.execute(sql.replace("?", "%s"), tuple(params))
        return cursor.fetchall() if cursor.description else []
