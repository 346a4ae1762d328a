"""PgStore, all collections in one PostgreSQL database: it opens the database (the schema
brought up to date, pgvector's version checked, a pool of connections) and keeps each
collection's model, the vectors staged while a collection is embedded again, and the feeds it
follows; its articles, passages, keywords and vectors come from the mixins of their modules."""

from __future__ import annotations

import logging
import threading
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from index.errors import StorageError, UnsuitableDatabase
from index.ingest.terms import TOKENIZER_VERSION
from index.records import Feed, Passage
from index.storage import sentence_rows
from index.storage.postgres.articles import PgArticles
from index.storage.postgres.connection import _first_line, _now, redact
from index.storage.postgres.keywords import PgPostings
from index.storage.postgres.schema import PgSchema
from index.storage.postgres.vectors import (
    EXACT_LIMIT,
    ITERATIVE_SCANS,
    MIN_PGVECTOR,
    PgVectors,
    _dotted,
    _pgvector_version,
)
from index.storage.sentence_rows import SentenceRows, Stored
from index.storage.sqlite_store import feed_from_row

__all__ = ["PgStore"]

# The package's logger: the log names the PostgreSQL store, not the module of one of its parts.
log = logging.getLogger(__package__)

# Seconds to open one connection, and at most to wait for one from the pool.
CONNECT_TIMEOUT_S = 3
WAIT_TIMEOUT_S = 4
# Seconds the pool keeps retrying one lost connection, waiting twice as long each time (1, 2,
# 4 s...), before it gives up and lets the next borrower start again at once: past a long
# outage the retries would otherwise be half a minute apart, and questions would go on failing
# that long after the server is back.
RECONNECT_TIMEOUT_S = 5


def _require_utf8(db: psycopg.Connection[Any], where: str) -> None:
    """Articles are text in any script: a database of another encoding (SQL_ASCII, what a
    cluster made with the C locale gets) would hand back bytes, or refuse a character."""
    row = db.execute("SHOW server_encoding").fetchone()
    encoding = str(row[0]) if row else "unknown"
    if encoding.upper() not in ("UTF8", "UTF-8"):
        raise UnsuitableDatabase(
            f"The database {where} uses the encoding {encoding}, and articles need UTF8: create "
            "one with CREATE DATABASE ... ENCODING 'UTF8' TEMPLATE template0, then point "
            "ARTICLEBOT_DATABASE_URL at it."
        )


class PgStore(PgSchema, PgArticles, PgPostings, PgVectors):
    """All collections in one PostgreSQL database: the same operations as the SQLite store."""

    def __init__(self, url: str, dim: int, *, max_connections: int = 8) -> None:
        self.url = url
        self.path = redact(url)  # where the data is, for messages
        self._hnsw_dims: set[int] = set()
        self._hnsw_lock = threading.Lock()
        try:
            with psycopg.connect(url, autocommit=True) as db:
                _require_utf8(db, self.path)
                self._migrate(db)
                self.pgvector = _pgvector_version(db)
            self.pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max_connections,
                # While the server is down or restarting, a question waits a few seconds for a
                # connection and is then told so, instead of hanging for the pool's default
                # half a minute; a connection the restart broke is found by `check` when it is
                # borrowed and replaced, so no process needs restarting afterwards.
                kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
                timeout=WAIT_TIMEOUT_S,
                reconnect_timeout=RECONNECT_TIMEOUT_S,
                check=ConnectionPool.check_connection,
                configure=register_vector,
                open=True,
            )
            self.pool.wait(timeout=30)
        except (psycopg.Error, PoolTimeout) as exc:
            raise StorageError(
                f"Cannot use the database {self.path} ({_first_line(exc)}); check "
                "ARTICLEBOT_DATABASE_URL and that PostgreSQL with pgvector is running."
            ) from exc
        if self.pgvector < MIN_PGVECTOR:
            self.pool.close()
            raise UnsuitableDatabase(
                f"The database {self.path} has pgvector {_dotted(self.pgvector)}; articlebot "
                f"needs {_dotted(MIN_PGVECTOR)} or newer: install a newer pgvector and run "
                "ALTER EXTENSION vector UPDATE."
            )
        self.iterative_scans = self.pgvector >= ITERATIVE_SCANS
        log.info(
            "pgvector %s: collections past %s passages use %s",
            _dotted(self.pgvector),
            f"{EXACT_LIMIT:,}",
            self.approximate_search,
        )
        self.ensure_vector_index(dim)
        self.check_buffers()

    # collections

    def collection_model(self, collection: str) -> tuple[str, int] | None:
        rows = self._rows("SELECT model, dim FROM collections WHERE name = %s", (collection,))
        return (rows[0]["model"], rows[0]["dim"]) if rows and rows[0]["model"] else None

    def set_collection_model(self, collection: str, model: str, dim: int) -> None:
        self.ensure_vector_index(dim)
        with self._conn() as db:
            _set_model(db, collection, model, dim)

    def collection_names(self) -> list[str]:
        """Every collection that holds an article or follows a feed."""
        rows = self._rows(
            "SELECT collection FROM articles UNION SELECT collection FROM feeds ORDER BY 1"
        )
        return [r["collection"] for r in rows]

    def ping(self) -> None:
        self._rows("SELECT 1 FROM articles LIMIT 1")

    # re-embedding (see sqlite_passages.py): staged beside the old vectors, swapped in at once

    def unstaged_passages(self, collection: str, model: str, dim: int) -> list[Passage]:
        with self._write(collection) as db:
            db.execute(
                "DELETE FROM staged_embeddings "
                "WHERE collection = %s AND (model != %s OR dim != %s)",
                (collection, model, dim),
            )
        return self._passages(
            "p WHERE collection = %s AND NOT EXISTS "
            "(SELECT 1 FROM staged_embeddings s WHERE s.passage_id = p.id) ORDER BY id",
            (collection,),
        )

    def sentence_vectors(self, ids: list[int], model: str, dim: int) -> dict[int, Stored]:
        with self._conn() as db:
            return sentence_rows.read(db, "%s", ids, model, dim)

    def stage_embeddings(
        self,
        collection: str,
        model: str,
        ids: np.ndarray,
        vectors: np.ndarray,
        sentences: SentenceRows | None = None,
    ) -> None:
        dim = int(vectors.shape[1])
        with self._write(collection) as db, db.cursor() as cur:
            if sentences is not None:  # over the old model's: read only once swapped in
                sentence_rows.write(db, "%s", [int(i) for i in ids], sentences)
            cur.executemany(
                "INSERT INTO staged_embeddings SELECT id, %s, %s, %s, %s FROM passages "
                "WHERE id = %s ON CONFLICT (passage_id) DO UPDATE SET model = excluded.model, "
                "dim = excluded.dim, embedding = excluded.embedding",
                [
                    (collection, model, dim, vectors[i].astype(np.float32), int(pid))
                    for i, pid in enumerate(ids)
                ],
            )

    def swap_staged(self, collection: str, model: str, dim: int) -> bool:
        self.ensure_vector_index(dim)
        with self._write(collection) as db:
            missing = db.execute(
                "SELECT 1 FROM passages p WHERE collection = %s AND NOT EXISTS "
                "(SELECT 1 FROM staged_embeddings s WHERE s.passage_id = p.id "
                "AND s.model = %s AND s.dim = %s) LIMIT 1",
                (collection, model, dim),
            ).fetchone()
            if missing:
                return False
            db.execute(
                "UPDATE passages p SET embedding = s.embedding FROM staged_embeddings s "
                "WHERE s.passage_id = p.id AND p.collection = %s",
                (collection,),
            )
            db.execute("DELETE FROM staged_embeddings WHERE collection = %s", (collection,))
            _set_model(db, collection, model, dim)
            return True

    # feeds

    def add_feed(
        self, collection: str, url: str, title: str | None, added_by: str | None
    ) -> tuple[Feed, bool]:
        with self._write(collection) as db, db.cursor(row_factory=dict_row) as cur:
            found = cur.execute(
                "SELECT * FROM feeds WHERE collection = %s AND url = %s", (collection, url)
            ).fetchone()
            if found:
                return feed_from_row(found), False
            row = cur.execute(
                "INSERT INTO feeds (collection, url, title, added_by, added_at) "
                "VALUES (%s,%s,%s,%s,%s) RETURNING *",
                (collection, url, title, added_by, _now()),
            ).fetchone()
            assert row is not None
            return feed_from_row(row), True

    def feed_collections(self) -> list[str]:
        rows = self._rows("SELECT DISTINCT collection FROM feeds ORDER BY collection")
        return [r["collection"] for r in rows]

    def list_feeds(self, collection: str) -> list[Feed]:
        rows = self._rows("SELECT * FROM feeds WHERE collection = %s ORDER BY id", (collection,))
        return [feed_from_row(r) for r in rows]

    def delete_feed(self, collection: str, feed_id: int) -> Feed | None:
        rows = self._rows(
            "DELETE FROM feeds WHERE collection = %s AND id = %s RETURNING *",
            (collection, feed_id),
        )
        return feed_from_row(rows[0]) if rows else None

    def seen_entries(self, feed_id: int) -> set[str]:
        rows = self._rows("SELECT entry FROM feed_entries WHERE feed_id = %s", (feed_id,))
        return {r["entry"] for r in rows}

    def mark_seen(self, feed_id: int, entries: list[str]) -> None:
        now = _now()
        with self._conn() as db, db.transaction():
            if not db.execute("SELECT 1 FROM feeds WHERE id = %s", (feed_id,)).fetchone():
                return  # removed meanwhile: nothing to record
            with db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO feed_entries (feed_id, entry, seen_at) VALUES (%s,%s,%s) "
                    "ON CONFLICT DO NOTHING",
                    [(feed_id, entry, now) for entry in entries],
                )
            db.execute("UPDATE feeds SET checked_at = %s WHERE id = %s", (now, feed_id))


def _set_model(db: psycopg.Connection[Any], collection: str, model: str, dim: int) -> None:
    db.execute(
        "INSERT INTO collections (name, model, dim, created_at, tokenizer) "
        "VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (name) DO UPDATE SET model = excluded.model, dim = excluded.dim",
        (collection, model, dim, _now(), TOKENIZER_VERSION),
    )
