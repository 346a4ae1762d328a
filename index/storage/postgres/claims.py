"""The claim on a range of shards in PostgreSQL, for bot processes on several machines that
share one database (index/storage/claims.py says what a claim is and why).

Session advisory locks on a connection of the claim's own: the server releases them when that
session ends, a crashed process's included. The connection's `application_name` names its
holder, which the refused process reads from pg_stat_activity.

A session also ends while its process runs on: the server restarts, an administrator or an
idle timeout ends it, a network drops it. Its locks are gone then, and a second process for the
same shards would start beside the first. So the claim is kept: the connection has TCP
keepalives both ways and no idle timeouts, a thread asks every CHECK_S seconds (and at once when
the server writes to the idle connection, as it does when it ends the session) whether the
session still holds every lock, and once it does not, takes the claim again on a new connection,
every RETAKE_S seconds until it has it. Meanwhile `problem()` says why the claim is not held
(the bot answers nothing then); if another process took the shards meanwhile, `taken_over()`
holds the sentence the bot stops with.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import select
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg

from index.errors import ConfigurationError, StorageError
from index.storage.claims import (
    Claim,
    after_loss,
    describe,
    holder,
    other_count,
    other_release,
    refusal,
    release,
)
from index.storage.postgres.connection import _first_line, redact

__all__ = ["DatabaseClaim", "served_by_database"]

log = logging.getLogger(__name__)

# The first key of every articlebot claim lock ("ABOT"), apart from other advisory locks (the
# collections' write locks use one-key hashes); the second is 0 for the whole, 1 + shard.
NAMESPACE = 0x41424F54
WHOLE = 0
# Shared by every process: the shard count's ("ABOC", the count) and the release's ("ABOR", a
# hash of it). The gate ("ABOG") is held, for one transaction, while a process takes its claim.
COUNTS = 0x41424F43
RELEASES = 0x41424F52
GATE = 0x41424F47
SPACES = [NAMESPACE, COUNTS, RELEASES]

# How often the claim's session is asked whether it still holds its locks, and how long after
# its last answer it still counts as held (a check that hangs on a dead network): well within
# the 25 s after which the server ends a session whose client went silent (SESSION below).
CHECK_S = 3.0
HOLD_S = 10.0
RETAKE_S = 2.0
# The client notices a dead server or network within seconds, not the kernel's two hours.
KEEPALIVES = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}
# Milliseconds a write may go unacknowledged (libpq 12 and newer): a check on a dead network.
USER_TIMEOUT_MS = 10_000
# And the server a dead client (its locks then free for the process that replaces it); no idle
# timeout ends the session; no statement on it waits long.
SESSION = {
    "tcp_keepalives_idle": "10",
    "tcp_keepalives_interval": "5",
    "tcp_keepalives_count": "3",
    "idle_session_timeout": "0",
    "idle_in_transaction_session_timeout": "0",
    "statement_timeout": "15s",
}
GATE_TIMEOUT = "10s"


def release_key(name: str) -> int:
    """The release's lock key: 31 bits of its hash, the same in every process."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") & 0x7FFFFFFF


class DatabaseClaim(Claim):
    """The database's claim on `shards` of `count`, held and kept while open."""

    def __init__(self, url: str, count: int | None, shards: Sequence[int] | None) -> None:
        super().__init__(describe(shards, count))
        self.url, self.count, self.shards = url, count, shards
        self.where = f"the database {redact(url)}"
        self._db: psycopg.Connection[Any] | None = None
        self._pid = 0
        self._locks = 0
        self._confirmed = time.monotonic()
        self._lost: str | None = None
        self._taken: ConfigurationError | None = None
        self._stop = threading.Event()
        self._wake, self._waker = socket.socketpair()
        self._thread: threading.Thread | None = None

    # What the bot reads, from any thread.

    def problem(self) -> str | None:
        if self._taken is not None:
            return "another articlebot process took its shards"
        if self._lost is not None:
            return self._lost
        silent = time.monotonic() - self._confirmed
        if silent > HOLD_S:
            return f"{self.where} has not confirmed it for {silent:.0f} s"
        return None

    def taken_over(self) -> ConfigurationError | None:
        return self._taken

    # Taking, keeping, letting go.

    def take(self) -> None:
        """Take the claim and start keeping it; raises what refuses it."""
        try:
            self._db = self._connect()
        except psycopg.Error as exc:
            raise StorageError(
                f"Cannot use {self.where} ({_first_line(exc)}); check "
                "ARTICLEBOT_DATABASE_URL and that PostgreSQL is running."
            ) from None
        try:
            self._take(self._db)
        except psycopg.Error as exc:
            self._db.close()
            self._db = None
            raise StorageError(
                f"Cannot take the claim on {self.serving} in {self.where} "
                f"({_first_line(exc)}); try again in a minute."
            ) from None
        except BaseException:
            self._db.close()
            self._db = None
            raise
        self._thread = threading.Thread(target=self._keep, name="articlebot-claim", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._waker.send(b"x")
        if self._thread is not None:
            self._thread.join(HOLD_S)
        if self._db is not None:
            self._db.close()
        self._wake.close()
        self._waker.close()

    def _connect(self) -> psycopg.Connection[Any]:
        me = f"articlebot {holder(self.count, self.shards)}"
        options: dict[str, Any] = dict(KEEPALIVES)
        if psycopg.pq.version() >= 120000:
            options["tcp_user_timeout"] = USER_TIMEOUT_MS
        db = psycopg.connect(
            self.url, autocommit=True, connect_timeout=5, application_name=me[:63], **options
        )
        try:
            # Only those this server has (idle_session_timeout came with PostgreSQL 14).
            db.execute(
                "SELECT set_config(s.name, v.value, false) FROM pg_settings s "
                "JOIN unnest(%s::text[], %s::text[]) AS v(name, value) ON v.name = s.name",
                (list(SESSION), list(SESSION.values())),
            )
        except psycopg.Error:
            db.close()
            raise
        return db

    def _take(self, db: psycopg.Connection[Any]) -> None:
        """Every lock of the claim, holding the gate: a process that starts meanwhile waits
        for the gate, then sees them all. Raises what refuses it, or the driver's error."""
        count, shards = self.count, self.shards
        try:
            with db.transaction():
                db.execute("SELECT set_config('lock_timeout', %s, true)", (GATE_TIMEOUT,))
                db.execute("SELECT pg_advisory_xact_lock(%s, 0)", (GATE,))
                self._refuse_others(db)
                taken = [(RELEASES, release_key(release()))]
                if count is not None:
                    taken.append((COUNTS, count))
                for space, key in taken:  # shared: held by every process of the same
                    _lock(db, "pg_try_advisory_lock_shared", space, key)
                if shards is None:
                    if not _lock(db, "pg_try_advisory_lock", NAMESPACE, WHOLE):
                        raise refusal(None, self.where, _holders(db, None), count)
                    taken.append((NAMESPACE, WHOLE))
                else:
                    if not _lock(db, "pg_try_advisory_lock_shared", NAMESPACE, WHOLE):
                        raise refusal(shards, self.where, _holders(db, [WHOLE]), count)
                    taken.append((NAMESPACE, WHOLE))
                    for shard in sorted(set(shards)):
                        if not _lock(db, "pg_try_advisory_lock", NAMESPACE, 1 + shard):
                            raise refusal(shards, self.where, _holders(db, [1 + shard]), count)
                        taken.append((NAMESPACE, 1 + shard))
                row = db.execute("SELECT pg_backend_pid()").fetchone()
        except psycopg.errors.OutOfMemory as exc:  # the server's lock table is full
            raise ConfigurationError(
                f"{self.where} has no room for a lock on each of the shards of "
                f"{self.serving} ({_first_line(exc)}); raise max_locks_per_transaction there, "
                "or give each process fewer shards with ARTICLEBOT_SHARD_IDS."
            ) from None
        self._pid, self._locks = int(row[0]) if row else 0, len(taken)
        self._confirmed = time.monotonic()

    def _refuse_others(self, db: psycopg.Connection[Any]) -> None:
        """Refuse while another session holds a lock of another release (or a claim of a
        release before the releases had locks) or of another shard count."""
        mine = release_key(release())
        for _pid, name, same_release, theirs in db.execute(
            "SELECT l.pid, max(a.application_name), "
            "bool_or(l.classid::bigint = %s AND l.objid::bigint = %s), "
            "max(l.objid::bigint) FILTER (WHERE l.classid::bigint = %s) "
            "FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 "
            "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "AND l.pid <> pg_backend_pid() AND l.classid::bigint = ANY(%s) "
            "GROUP BY l.pid ORDER BY l.pid",
            (RELEASES, mine, COUNTS, SPACES),
        ).fetchall():
            others = [_named(name)] if name else []
            if not same_release:
                raise other_release(self.where, None, others)
            if theirs is not None and self.count is not None and theirs != self.count:
                raise other_count(self.where, int(theirs), self.count, others)

    def _confirm(self, db: psycopg.Connection[Any]) -> str | None:
        """Why the session no longer holds the claim, or None while it does."""
        row = db.execute(
            "SELECT pg_backend_pid(), count(*) FROM pg_locks WHERE pid = pg_backend_pid() "
            "AND locktype = 'advisory' AND granted AND objsubid = 2 "
            "AND classid::bigint = ANY(%s)",
            (SPACES,),
        ).fetchone()
        pid, held = (int(row[0]), int(row[1])) if row else (0, 0)
        if pid != self._pid:  # a pooler between: another server session answers now
            return f"{self.where} answers from another session ({pid}, not {self._pid})"
        if held != self._locks:
            return f"{self.where} holds {held} of its {self._locks} locks"
        return None

    def _keep(self) -> None:
        """The thread: confirm the claim while it is held, take it again while it is not."""
        while not self._stop.is_set():
            db = self._db
            if db is None:
                self._take_again()
                if self._db is None and self._taken is None:
                    self._stop.wait(RETAKE_S)
                if self._taken is not None:
                    return
                continue
            self._wait(db)
            if self._stop.is_set():
                return
            try:
                why = self._confirm(db)
            except psycopg.Error as exc:
                why = f"its connection to {self.where} was lost ({_first_line(exc)})"
            if why is None:
                self._confirmed = time.monotonic()
            else:
                self._lose(db, why)

    def _wait(self, db: psycopg.Connection[Any]) -> None:
        """CHECK_S seconds, or less: until the server writes to the idle connection (it ends
        the session) or the claim is closed."""
        # A connection already closed: no wait, the check says so.
        with contextlib.suppress(OSError, ValueError, psycopg.Error):
            select.select([db.fileno(), self._wake.fileno()], [], [], CHECK_S)

    def _lose(self, db: psycopg.Connection[Any], why: str) -> None:
        self._lost = why
        self._db = None
        with contextlib.suppress(Exception):
            db.close()
        log.warning(
            "The claim on %s is lost: %s; this process answers nothing until it takes it again.",
            self.serving,
            why,
        )

    def _take_again(self) -> None:
        try:
            db = self._connect()
        except psycopg.Error as error:
            self._lost = f"{self.where} is not answering ({_first_line(error)})"
            return
        try:
            self._take(db)
        except ConfigurationError as error:  # another process holds the shards now
            db.close()
            # The bot stops with it, in its one sentence (bot/__main__.py).
            self._taken = after_loss(error, self.serving)
            return
        except psycopg.Error as error:  # the server went again, or the gate was held too long
            db.close()
            self._lost = f"{self.where} did not give it back ({_first_line(error)})"
            return
        self._db, self._lost = db, None
        log.info("Took the claim on %s again.", self.serving)


@contextlib.contextmanager
def served_by_database(
    url: str, count: int | None, shards: Sequence[int] | None
) -> Iterator[DatabaseClaim]:
    """Hold and keep the database's claim on `shards` of `count` (None: all of them; a count
    of None: as many as Discord recommends) for the block."""
    claim = DatabaseClaim(url, count, shards)
    try:
        claim.take()
        yield claim
    finally:
        claim.close()


def _lock(db: psycopg.Connection[Any], function: str, space: int, key: int) -> bool:
    row = db.execute(f"SELECT {function}(%s, %s)", (space, key)).fetchone()
    return bool(row and row[0])


def _named(application_name: str) -> str:
    return application_name.removeprefix("articlebot ")


def _holders(db: psycopg.Connection[Any], keys: Sequence[int] | None) -> list[str]:
    """The application names of the sessions of this database holding the keys (None: any
    key), the whole key counting only where it is held exclusively (by a process of all
    shards)."""
    rows = db.execute(
        "SELECT DISTINCT a.application_name FROM pg_locks l "
        "JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s::oid "
        "AND l.objsubid = 2 AND a.pid <> pg_backend_pid() "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
        "AND (%s::bigint[] IS NULL OR l.objid::bigint = ANY(%s::bigint[])) "
        "AND (l.objid::bigint <> 0 OR l.mode = 'ExclusiveLock')",
        (NAMESPACE, keys, keys),
    ).fetchall()
    return [_named(str(r[0])) for r in rows if r[0]]
