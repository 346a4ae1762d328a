"""Dense search with pgvector: an exact scan of a collection's rows up to EXACT_LIMIT passages,
an HNSW index past it (iterative scans from pgvector 0.8; before that a wider beam, and the exact
search where it falls short); one HNSW index per vector size, built once after a bulk load; and
the pgvector versions each path needs."""

from __future__ import annotations

import contextlib
import logging
import math
import re
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import psycopg

from index.storage.postgres.connection import PgConnection
from index.storage.postgres.schema import _SCHEMA_LOCK

__all__ = [
    "BULK_BUILD_MEMORY",
    "EXACT_LIMIT",
    "HNSW_EF_FILTERED",
    "HNSW_EF_FLOOR",
    "HNSW_MAX_SCAN",
    "ITERATIVE_SCANS",
    "MIN_PGVECTOR",
    "PgVectors",
]

# The package's logger, as the store's: the log names the PostgreSQL store.
log = logging.getLogger(__package__)

# Exact search up to this many passages in a collection (about 2,000 servers' worth of articles
# fit under it); an HNSW scan past it.
EXACT_LIMIT = 20_000
# How many index tuples an HNSW scan may visit to fill the top k among one collection's rows.
HNSW_MAX_SCAN = 40_000
# The beam (ef_search) is the recall, with iterative scans or without. At 1,000,000 passages in
# one collection (`articlebot bench`, 2,000 queries; m 16, ef_construction 64; shared_buffers
# 4 GB; pgvector 0.8 built portably, iterative scans) recall@10 / p50 were 0.947 / 18.3 ms at
# 300, 0.954 / 16.9 ms at 350, 0.962 / 18.6 ms at 400; pgvector 0.6 (one scan, then the
# collection's rows) 0.945 / 14.3 ms at 300, 0.953 / 20.3 ms at 350 (another build of the
# graph). 400 is the floor on both paths; without iterative scans a collection that is a small
# share of the table gets more (`_beam`), up to pgvector's limit; 500 when the table was never
# counted.
HNSW_EF_FLOOR = 400
HNSW_EF_FILTERED = 500
HNSW_EF_MAX = 1_000
# Memory for building the HNSW index after a bulk load: pgvector builds fast while the graph
# fits (about 2 GB at a million 384-dimension passages), and much slower once it spills.
BULK_BUILD_MEMORY = "3GB"
# HNSW indexes came with pgvector 0.5; iterative index scans with 0.8.
MIN_PGVECTOR = (0, 5)
ITERATIVE_SCANS = (0, 8)


class PgVectors(PgConnection):
    """The store's vector indexes and its dense search over the passages' vectors."""

    pgvector: tuple[int, ...]
    iterative_scans: bool
    _hnsw_dims: set[int]
    _hnsw_lock: threading.Lock

    @property
    def approximate_search(self) -> str:
        """How a collection past EXACT_LIMIT is searched, as `stats` names it."""
        return "hnsw-iterative" if self.iterative_scans else "hnsw-or-exact"

    def ensure_vector_index(self, dim: int, db: psycopg.Connection[Any] | None = None) -> None:
        """The HNSW index for vectors of `dim` dimensions (pgvector indexes one size a time)."""
        with self._hnsw_lock:
            if dim in self._hnsw_dims:
                return
            with contextlib.ExitStack() as stack:
                if db is None:
                    db = stack.enter_context(self._conn())
                stack.enter_context(db.transaction())
                db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                db.execute(
                    f"CREATE INDEX IF NOT EXISTS passages_hnsw_{int(dim)} ON passages "
                    f"USING hnsw ((embedding::vector({int(dim)})) vector_ip_ops) "
                    f"WHERE vector_dims(embedding) = {int(dim)}"
                )
            self._hnsw_dims.add(dim)

    @contextlib.contextmanager
    def bulk_load(self, dim: int) -> Iterator[None]:
        """Many passages into an empty database: the HNSW index is built once, after the rows,
        which is several times faster than keeping it up to date row by row. Into a database
        that holds passages already, the index stays (other processes are searching it)."""
        with self._conn() as db:
            empty = db.execute("SELECT NOT EXISTS (SELECT 1 FROM passages)").fetchone()
        if not (empty and empty[0]):
            yield
            return
        with self._hnsw_lock, self._conn() as db:
            db.execute(f"DROP INDEX IF EXISTS passages_hnsw_{int(dim)}")
            self._hnsw_dims.discard(dim)
        try:
            yield
        finally:
            with self._conn() as db:
                # The graph is built in memory when it fits, with as many parallel workers as
                # the server allows (max_parallel_maintenance_workers, 2 by default).
                db.execute(f"SET maintenance_work_mem = '{BULK_BUILD_MEMORY}'")
                self.ensure_vector_index(dim, db)
                db.execute("RESET maintenance_work_mem")  # the connection goes back to the pool
                # The table's statistics now, not when autovacuum gets to it: until then the
                # planner may sort a whole collection rather than scan the HNSW index (50,000
                # passages on pgvector 0.8: 60 ms a search before, 6.6 ms after).
                db.execute("ANALYZE passages")
            self.check_buffers()

    def check_buffers(self) -> None:
        """Log a warning when the HNSW indexes outgrow PostgreSQL's shared_buffers: a search
        then reads index pages through the operating system's cache, and at a million passages
        took 24 ms at p50 instead of 14 ms (128 MB against 4 GB, `articlebot bench`)."""
        with self._conn() as db:
            index = _hnsw_bytes(db)
            buffers = _shared_buffers_bytes(db)
        if index > buffers:
            log.warning(
                "The HNSW index (%s) is larger than PostgreSQL's shared_buffers (%s): searches "
                "of large collections run slower; set shared_buffers above %s and restart "
                "PostgreSQL.",
                _size(index),
                _size(buffers),
                _size(index),
            )

    # dense search

    def nearest(
        self, collection: str, query: np.ndarray, k: int, dim: int, *, approximate: bool
    ) -> list[tuple[int, float]]:
        """The k passages with the highest inner product with `query` (cosines: all vectors
        are normalized)."""
        vector = np.ascontiguousarray(query, dtype=np.float32)
        with self._conn() as db, db.transaction():
            rows = self._hnsw_nearest(db, collection, vector, k, dim) if approximate else None
            if rows is None:
                rows = db.execute(
                    "SELECT id, -(embedding <#> %s) AS score FROM passages "
                    "WHERE collection = %s ORDER BY score DESC, id LIMIT %s",
                    (vector, collection, k),
                ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def _hnsw_nearest(
        self, db: psycopg.Connection[Any], collection: str, vector: np.ndarray, k: int, dim: int
    ) -> list[Any] | None:
        """The HNSW scan's top k of one collection; None where it cannot fill them (pgvector
        before 0.8, other collections' rows taking the beam): then only an exact search can."""
        # The expression and the predicate match the HNSW index of this dimension.
        nearest = (
            f"SELECT id, collection, -(embedding::vector({dim}) <#> %(q)s::vector({dim})) AS score "
            f"FROM passages WHERE vector_dims(embedding) = {dim} "
            f"ORDER BY embedding::vector({dim}) <#> %(q)s::vector({dim})"
        )
        if self.iterative_scans:
            db.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            db.execute(f"SET LOCAL hnsw.max_scan_tuples = {HNSW_MAX_SCAN}")
            db.execute(f"SET LOCAL hnsw.ef_search = {min(HNSW_EF_MAX, max(HNSW_EF_FLOOR, k))}")
            # The scan goes on past ef_search until the collection's top k are found.
            sql = (
                f"SELECT id, -(embedding::vector({dim}) <#> %(q)s::vector({dim})) AS score "
                f"FROM passages WHERE collection = %(c)s AND vector_dims(embedding) = {dim} "
                f"ORDER BY embedding::vector({dim}) <#> %(q)s::vector({dim}) LIMIT %(k)s"
            )
        else:
            # One scan of the whole index, then the collection's rows among what it found.
            beam = _beam(db, collection, k)
            db.execute(f"SET LOCAL hnsw.ef_search = {beam}")
            sql = (
                f"SELECT id, score FROM ({nearest} LIMIT {beam}) n "
                "WHERE collection = %(c)s ORDER BY score DESC LIMIT %(k)s"
            )
        rows = db.execute(sql, {"q": vector, "c": collection, "k": k}).fetchall()
        if len(rows) < k and not self.iterative_scans:
            return None
        rows.sort(key=lambda r: -r[1])  # relaxed_order may return a few out of order
        return rows

    def cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        if not ids:
            return {}
        vector = np.ascontiguousarray(query, dtype=np.float32)
        with self._conn() as db:
            rows = db.execute(
                "SELECT id, -(embedding <#> %s) FROM passages WHERE id = ANY(%s)",
                (vector, [int(i) for i in ids]),
            ).fetchall()
        return {int(r[0]): float(r[1]) for r in rows}

    def vector_index_bytes(self, dim: int) -> int:
        with self._conn() as db:
            row = db.execute(
                "SELECT COALESCE(pg_relation_size(to_regclass(%s)), 0)", (f"passages_hnsw_{dim}",)
            ).fetchone()
        return int(row[0]) if row else 0


def _beam(db: psycopg.Connection[Any], collection: str, k: int) -> int:
    """How many rows one HNSW scan reads for a collection's top k without iterative scans:
    at least the floor, and about four times k over the collection's share of the table (a
    collection that is a twentieth of it reads 800 for its top 10), at most pgvector's limit."""
    row = db.execute(
        "SELECT c.passages, t.reltuples FROM collections c, pg_class t "
        "WHERE c.name = %s AND t.oid = 'passages'::regclass",
        (collection,),
    ).fetchone()
    if not row or row[1] is None or row[1] <= 0:  # never counted yet: the wide beam
        return max(HNSW_EF_FILTERED, k)
    share = min(1.0, max(int(row[0]), 1) / float(row[1]))
    return int(min(HNSW_EF_MAX, max(HNSW_EF_FLOOR, k, math.ceil(4 * k / share))))


def _hnsw_bytes(db: psycopg.Connection[Any]) -> int:
    row = db.execute(
        "SELECT COALESCE(SUM(pg_relation_size(oid)), 0) FROM pg_class "
        "WHERE relkind = 'i' AND relname LIKE 'passages\\_hnsw\\_%'"
    ).fetchone()
    return int(row[0]) if row else 0


def _shared_buffers_bytes(db: psycopg.Connection[Any]) -> int:
    row = db.execute(
        "SELECT setting::bigint * current_setting('block_size')::bigint FROM pg_settings "
        "WHERE name = 'shared_buffers'"
    ).fetchone()
    return int(row[0]) if row else 0


def _size(n: int) -> str:
    for unit, scale in (("GB", 2**30), ("MB", 2**20)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if unit == "GB" else f"{n / scale:.0f} {unit}"
    return f"{n / 2**10:.0f} kB"


def _pgvector_version(db: psycopg.Connection[Any]) -> tuple[int, ...]:
    row = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return tuple(int(x) for x in re.findall(r"\d+", row[0])[:3]) if row else (0,)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))
