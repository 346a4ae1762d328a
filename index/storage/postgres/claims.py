"""The claim on a range of shards in PostgreSQL, for bot processes on several machines that
share one database (index/storage/claims.py says what a claim is and why).

Session advisory locks on a connection of the claim's own, kept open while the bot runs: the
server releases them when that connection ends, a crashed process's included. The connection's
`application_name` names its holder, which the refused process reads from pg_stat_activity.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from index.errors import StorageError
from index.storage.claims import holder, refusal
from index.storage.postgres.connection import _first_line, redact

__all__ = ["served_by_database"]

# The first key of every articlebot claim ("ABOT"), apart from other advisory locks (the
# collections' write locks use one-key hashes); the second is 0 for the whole, 1 + shard.
NAMESPACE = 0x41424F54
WHOLE = 0


@contextlib.contextmanager
def served_by_database(url: str, shards: Sequence[int] | None) -> Iterator[None]:
    """Hold the database's claim on `shards` (None: all of them) for the block."""
    me = f"articlebot {holder(shards)}"
    try:
        db = psycopg.connect(url, autocommit=True, connect_timeout=5, application_name=me[:63])
    except psycopg.Error as exc:
        raise StorageError(
            f"Cannot use the database {redact(url)} ({_first_line(exc)}); check "
            "ARTICLEBOT_DATABASE_URL and that PostgreSQL is running."
        ) from None
    where = f"the database {redact(url)}"
    with contextlib.closing(db):
        if shards is None:
            if not _take(db, "pg_try_advisory_lock", WHOLE):
                raise refusal(None, where, _holders(db, None))
        else:
            if not _take(db, "pg_try_advisory_lock_shared", WHOLE):
                raise refusal(shards, where, _holders(db, [WHOLE]))
            for shard in sorted(set(shards)):
                if not _take(db, "pg_try_advisory_lock", 1 + shard):
                    raise refusal(shards, where, _holders(db, [1 + shard]))
        yield


def _take(db: psycopg.Connection[Any], function: str, key: int) -> bool:
    row = db.execute(f"SELECT {function}(%s, %s)", (NAMESPACE, key)).fetchone()
    return bool(row and row[0])


def _holders(db: psycopg.Connection[Any], keys: Sequence[int] | None) -> list[str]:
    """The application names of the sessions holding the keys (None: any key), the whole
    key counting only where it is held exclusively (by a process of all shards)."""
    rows = db.execute(
        "SELECT DISTINCT a.application_name FROM pg_locks l "
        "JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s::oid "
        "AND l.objsubid = 2 AND a.pid <> pg_backend_pid() "
        "AND (%s::bigint[] IS NULL OR l.objid::bigint = ANY(%s::bigint[])) "
        "AND (l.objid::bigint <> 0 OR l.mode = 'ExclusiveLock')",
        (NAMESPACE, keys, keys),
    ).fetchall()
    return [str(r[0]).removeprefix("articlebot ") for r in rows if r[0]]
