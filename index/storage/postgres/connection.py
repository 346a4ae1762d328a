"""The connections every part of the PostgreSQL store works through: one pool shared by the
store's threads, a transaction holding a collection's write lock, rows as dicts; and what
messages and rows need (the URL without its password, an error's first line, the time)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from index.errors import StorageError, without_passwords

__all__ = ["PgConnection", "redact"]


def redact(url: str) -> str:
    """The database URL without its password (`user:pass@` or `?password=`), for messages."""
    return without_passwords(url)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _first_line(exc: BaseException) -> str:
    """An error's first line, without a password: libpq's messages repeat a URL as typed."""
    return without_passwords((str(exc).strip().splitlines() or [type(exc).__name__])[0])


class PgConnection:
    """The pool of one database's connections, which every operation of the store borrows."""

    url: str
    path: str
    pool: ConnectionPool[psycopg.Connection[Any]]

    def close(self) -> None:
        self.pool.close()

    @contextlib.contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self.pool.connection() as db:
                yield db
        except PoolTimeout as exc:
            # No connection within the pool's wait: the server is down, restarting or full.
            raise StorageError(
                f"The database {self.path} is not answering ({_first_line(exc)}); "
                "try again in a minute."
            ) from exc
        except psycopg.OperationalError as exc:
            raise StorageError(
                f"Lost the database {self.path} ({_first_line(exc)}); try again in a minute."
            ) from exc

    @contextlib.contextmanager
    def _write(self, collection: str) -> Iterator[psycopg.Connection[Any]]:
        """One transaction holding the collection's write lock until it commits."""
        with self._conn() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (collection,))
            yield db

    def _rows(self, sql: str, args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self._conn() as db, db.cursor(row_factory=dict_row) as cur:
            return cur.execute(sql, args).fetchall()
