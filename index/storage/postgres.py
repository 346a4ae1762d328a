"""PostgreSQL with pgvector: articles, passages, vectors and keywords shared by many processes.

The only module that imports psycopg. Chosen with `ARTICLEBOT_DATABASE_URL`; the embedded
default (sqlite_store.py, search/embedded_backend.py) needs nothing installed, this one lets
several bot processes on several machines read and write one set of collections.

- Every write is one transaction. Writes to one collection take a transaction-scoped advisory
  lock, as SQLite's write lock does for the embedded store: an article's duplicate check, its
  number and its counters never race another process's add.
- Dense search: exact (a scan of the collection's rows, which the planner reaches through the
  collection's btree) up to EXACT_LIMIT passages, where it is fast and a filtered HNSW scan
  would lose recall among other collections' rows; above it an HNSW index on the vectors. With
  pgvector 0.8 or newer the scan is iterative, so the collection filter still fills the top k;
  with 0.5 to 0.7 it reads a wider beam (HNSW_EF_FILTERED) and, when other collections' rows
  leave fewer than k of this one's, the search is done exactly instead. `stats --json` and the
  log say which (`dense_search`).
- Keyword search is BM25 over a postings table, computed in SQL with the project's own
  tokenizer, bm25s's formula (Lucene idf) and the same k1 and b, so both backends rank alike.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import threading
from collections import Counter
from collections.abc import Collection as Container
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from index.errors import StorageError
from index.ingest.near_duplicates import SIMILAR, Fingerprint
from index.ingest.terms import BM25_B, BM25_K1, TOKENIZER_VERSION, tokenize
from index.records import Article, Document, Feed, IndexState, Passage
from index.storage.passage_reads import PassageReads
from index.storage.sqlite_store import article_from_row, feed_from_row

__all__ = ["PgBackend", "PgDatabase", "PgStore", "redact"]

log = logging.getLogger(__name__)

# Exact search up to this many passages in a collection (about 2,000 servers' worth of articles
# fit under it); an HNSW scan past it.
EXACT_LIMIT = 20_000
# How many index tuples an HNSW scan may visit to fill the top k among one collection's rows.
HNSW_MAX_SCAN = 40_000
HNSW_EF_SEARCH = 100
# Without iterative scans (pgvector before 0.8) one HNSW scan returns at most ef_search rows
# before the collection filter; a wider beam keeps recall and leaves room for the filter.
HNSW_EF_FILTERED = 400
# Memory for building the HNSW index after a bulk load: pgvector builds fast while the graph
# fits (about 2 GB at a million 384-dimension passages), and much slower once it spills.
BULK_BUILD_MEMORY = "3GB"
# HNSW indexes came with pgvector 0.5; iterative index scans with 0.8.
MIN_PGVECTOR = (0, 5)
ITERATIVE_SCANS = (0, 8)

_SCHEMA = [
    # version 1
    """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE collections (
        name TEXT PRIMARY KEY,
        model TEXT,
        dim INTEGER,
        created_at TEXT NOT NULL,
        passages BIGINT NOT NULL DEFAULT 0,
        tokens BIGINT NOT NULL DEFAULT 0
    );
    CREATE TABLE articles (
        id BIGSERIAL PRIMARY KEY,
        collection TEXT NOT NULL REFERENCES collections(name),
        number INTEGER NOT NULL,
        title TEXT NOT NULL,
        url TEXT,
        site TEXT,
        author TEXT,
        published TEXT,
        added_by TEXT,
        added_at TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        source TEXT NOT NULL,
        paragraphs INTEGER NOT NULL,
        UNIQUE (collection, content_hash)
    );
    CREATE INDEX articles_url ON articles(collection, url);
    CREATE TABLE passages (
        id BIGSERIAL PRIMARY KEY,
        article_id BIGINT NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        paragraph INTEGER NOT NULL,
        piece INTEGER NOT NULL,
        text TEXT NOT NULL,
        length INTEGER NOT NULL,
        embedding vector NOT NULL
    );
    CREATE INDEX passages_collection ON passages(collection, id);
    CREATE INDEX passages_article ON passages(article_id);
    CREATE TABLE postings (
        collection TEXT NOT NULL,
        term TEXT NOT NULL,
        passage_id BIGINT NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
        tf INTEGER NOT NULL,
        length INTEGER NOT NULL,
        PRIMARY KEY (collection, term, passage_id)
    );
    CREATE INDEX postings_passage ON postings(passage_id);
    CREATE TABLE staged_embeddings (
        passage_id BIGINT PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        embedding vector NOT NULL
    );
    CREATE TABLE feeds (
        id BIGSERIAL PRIMARY KEY,
        collection TEXT NOT NULL,
        url TEXT NOT NULL,
        title TEXT,
        added_by TEXT,
        added_at TEXT NOT NULL,
        checked_at TEXT,
        UNIQUE (collection, url)
    );
    CREATE TABLE feed_entries (
        feed_id BIGINT NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
        entry TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        PRIMARY KEY (feed_id, entry)
    )
    """,
    # version 2: the subheading a passage stands under, and each article's MinHash signature
    # with its bands' buckets, so that a near-duplicate is found without reading any text
    """
    ALTER TABLE passages ADD COLUMN heading TEXT;
    CREATE TABLE article_signatures (
        article_id BIGINT PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        signature BYTEA NOT NULL
    );
    CREATE TABLE signature_bands (
        collection TEXT NOT NULL,
        band INTEGER NOT NULL,
        bucket BIGINT NOT NULL,
        article_id BIGINT NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        PRIMARY KEY (collection, band, bucket, article_id)
    );
    CREATE INDEX signature_bands_article ON signature_bands(article_id)
    """,
    # version 3: the bot's conversations, votes and server settings (conversations.py,
    # collection_settings.py), so that every process answers a thread's follow-up, counts a
    # member's vote once and reads what a server's admins chose; ids are Discord's 64-bit ones
    """
    CREATE TABLE turns (
        collection TEXT NOT NULL,
        answer_id BIGINT NOT NULL,
        conversation BIGINT NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        abstained INTEGER NOT NULL,
        citations TEXT NOT NULL,
        asked_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (collection, answer_id)
    );
    CREATE INDEX turns_by_conversation ON turns (collection, conversation);
    CREATE INDEX turns_by_age ON turns (collection, asked_at);
    CREATE TABLE votes (
        collection TEXT NOT NULL,
        answer_id BIGINT NOT NULL,
        member_id BIGINT NOT NULL,
        helpful INTEGER NOT NULL,
        question TEXT NOT NULL,
        answer TEXT NOT NULL,
        abstained INTEGER NOT NULL,
        citations TEXT NOT NULL,
        voted_at DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (collection, answer_id, member_id)
    );
    CREATE TABLE settings (
        collection TEXT NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (collection, name)
    )
    """,
    # version 4: which tokenizer (bm25.TOKENIZER_VERSION) derived a collection's postings, so
    # that a process with a newer one derives them again before it searches (those before: 1)
    """
    ALTER TABLE collections ADD COLUMN tokenizer INTEGER NOT NULL DEFAULT 1
    """,
]

# Serializes schema changes between processes starting together.
_SCHEMA_LOCK = 0x61727469  # "arti"


def redact(url: str) -> str:
    """The database URL without its password, for messages."""
    return re.sub(r"(://[^:/@]*):[^@]*@", r"\1:***@", url)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _terms(title: str, text: str) -> Counter[str]:
    # The title joins each passage's keywords, as in the embedded keyword index.
    return Counter(tokenize(f"{title}\n{text}"))


class PgStore:
    """All collections in one PostgreSQL database: the same operations as the SQLite store."""

    def __init__(self, url: str, dim: int, *, max_connections: int = 8) -> None:
        self.url = url
        self.path = redact(url)  # where the data is, for messages
        self._hnsw_dims: set[int] = set()
        self._hnsw_lock = threading.Lock()
        try:
            with psycopg.connect(url, autocommit=True) as db:
                self._migrate(db)
                self.pgvector = _pgvector_version(db)
            self.pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max_connections,
                kwargs={"autocommit": True},
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
            raise StorageError(
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

    @property
    def approximate_search(self) -> str:
        """How a collection past EXACT_LIMIT is searched, as `stats` names it."""
        return "hnsw-iterative" if self.iterative_scans else "hnsw-or-exact"

    def close(self) -> None:
        self.pool.close()

    @staticmethod
    def _migrate(db: psycopg.Connection[Any]) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS articlebot_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM articlebot_schema").fetchone()
            version = row[0] if row else 0
            for number, script in enumerate(_SCHEMA[version:], start=version + 1):
                for statement in script.split(";"):
                    if statement.strip():
                        db.execute(statement)
                db.execute("DELETE FROM articlebot_schema")
                db.execute("INSERT INTO articlebot_schema VALUES (%s)", (number,))

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
                # The graph is built in memory when it fits, with the server's parallel workers.
                db.execute(f"SET maintenance_work_mem = '{BULK_BUILD_MEMORY}'")
                db.execute("SET max_parallel_maintenance_workers = 7")
                self.ensure_vector_index(dim, db)
                db.execute("RESET maintenance_work_mem")  # the connection goes back to the pool
                db.execute("RESET max_parallel_maintenance_workers")

    @contextlib.contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            with self.pool.connection() as db:
                yield db
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

    # articles

    _ARTICLE_SELECT = (
        "SELECT a.*, (SELECT COUNT(*) FROM passages p WHERE p.article_id = a.id) AS passages "
        "FROM articles a "
    )

    def find_existing(self, collection: str, content_hash: str, url: str | None) -> Article | None:
        with self._conn() as db:
            return _find_existing(db, collection, content_hash, url)

    def find_similar(self, collection: str, fingerprint: Fingerprint) -> Article | None:
        with self._conn() as db:
            return _find_similar(db, collection, fingerprint)

    def unsigned_articles(self, collection: str, limit: int = 100) -> dict[int, list[str]]:
        """Articles stored without a signature (at most `limit`), with their passages' text."""
        rows = self._rows(
            "SELECT id FROM articles a WHERE collection = %s AND NOT EXISTS "
            "(SELECT 1 FROM article_signatures s WHERE s.article_id = a.id) LIMIT %s",
            (collection, limit),
        )
        return {r["id"]: [p.text for p in self.passages(collection, r["id"])] for r in rows}

    def sign_articles(self, collection: str, fingerprints: dict[int, Fingerprint]) -> None:
        with self._write(collection) as db:
            for article_id, fingerprint in fingerprints.items():
                # An article removed meanwhile is not signed.
                if db.execute("SELECT 1 FROM articles WHERE id = %s", (article_id,)).fetchone():
                    _sign(db, collection, article_id, fingerprint)

    def get_article(self, collection: str, article_id: int) -> Article | None:
        rows = self._rows(
            self._ARTICLE_SELECT + "WHERE a.collection = %s AND a.id = %s",
            (collection, article_id),
        )
        return article_from_row(rows[0]) if rows else None

    def list_articles(self, collection: str) -> list[Article]:
        rows = self._rows(
            self._ARTICLE_SELECT + "WHERE a.collection = %s ORDER BY a.added_at DESC, a.id DESC",
            (collection,),
        )
        return [article_from_row(r) for r in rows]

    def insert_article(
        self,
        collection: str,
        doc: Document,
        content_hash: str,
        passages: list[tuple[int, int, str]],
        embeddings: np.ndarray,
        added_by: str | None,
        *,
        fingerprint: Fingerprint | None = None,
        same_url_is_new: bool = False,
    ) -> tuple[Article, bool]:
        """Store an article with its passages, vectors and postings in one transaction; with a
        fingerprint, an article like a stored one counts as present too (see sqlite_store.py)."""
        vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
        with self._write(collection) as db:
            url = None if same_url_is_new else doc.url
            existing = _find_existing(db, collection, content_hash, url)
            if not existing and fingerprint and not same_url_is_new:
                existing = _find_similar(db, collection, fingerprint)
            if existing:
                return existing, False
            db.execute(
                "INSERT INTO collections (name, created_at, tokenizer) VALUES (%s, %s, %s) "
                "ON CONFLICT (name) DO NOTHING",
                (collection, _now(), TOKENIZER_VERSION),
            )
            (number,) = db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM articles WHERE collection = %s",
                (collection,),
            ).fetchone() or (1,)
            row = db.execute(
                "INSERT INTO articles (collection, number, title, url, site, author, published, "
                "added_by, added_at, content_hash, source, paragraphs) "
                "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
                (
                    collection,
                    number,
                    doc.title,
                    doc.url,
                    doc.site,
                    doc.author,
                    doc.published,
                    added_by,
                    _now(),
                    content_hash,
                    doc.source,
                    len(doc.paragraphs),
                ),
            ).fetchone()
            assert row is not None
            article_id = int(row[0])
            headings = doc.headings or [None] * len(doc.paragraphs)
            _insert_passages(
                db,
                collection,
                article_id,
                doc.title,
                [(p, piece, text, headings[p - 1]) for p, piece, text in passages],
                vectors,
            )
            if fingerprint:
                _sign(db, collection, article_id, fingerprint)
        article = self.get_article(collection, article_id)
        assert article is not None
        return article, True

    def copy_article(
        self,
        article: Article,
        passages: list[Passage],
        vectors: np.ndarray,
        fingerprint: Fingerprint,
    ) -> tuple[Article, bool]:
        """Store an article from another store as it was (its number, who added it and when,
        its vectors); (the present one, False) when its text is already in the collection."""
        collection = article.collection
        with self._write(collection) as db:
            existing = _find_existing(db, collection, article.content_hash, None)
            if existing:
                return existing, False
            taken = db.execute(
                "SELECT 1 FROM articles WHERE collection = %s AND number = %s",
                (collection, article.number),
            ).fetchone()
            row = db.execute(
                "INSERT INTO articles (collection, number, title, url, site, author, published, "
                "added_by, added_at, content_hash, source, paragraphs) SELECT %s, "
                # a number already given here (to an article added since) gets the next free one
                "CASE WHEN %s THEN COALESCE(MAX(number), 0) + 1 ELSE %s END, "
                "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s FROM articles WHERE collection = %s RETURNING id",
                (
                    collection,
                    taken is not None,
                    article.number,
                    article.title,
                    article.url,
                    article.site,
                    article.author,
                    article.published,
                    article.added_by,
                    article.added_at,
                    article.content_hash,
                    article.source,
                    article.paragraphs,
                    collection,
                ),
            ).fetchone()
            assert row is not None
            article_id = int(row[0])
            texts = [(p.paragraph, p.piece, p.text, p.heading) for p in passages]
            _insert_passages(db, collection, article_id, article.title, texts, vectors)
            _sign(db, collection, article_id, fingerprint)
        copied = self.get_article(collection, article_id)
        assert copied is not None
        return copied, True

    def delete_article(self, collection: str, article_id: int) -> None:
        with self._write(collection) as db:
            found = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(length), 0) FROM passages WHERE article_id = %s "
                "AND collection = %s",
                (article_id, collection),
            ).fetchone()
            db.execute(
                "DELETE FROM articles WHERE collection = %s AND id = %s", (collection, article_id)
            )
            if found and found[0]:
                db.execute(
                    "UPDATE collections SET passages = passages - %s, tokens = tokens - %s "
                    "WHERE name = %s",
                    (found[0], found[1], collection),
                )

    # passages

    _PASSAGE = "SELECT id, article_id, paragraph, piece, text FROM passages "

    def _passages(self, sql: str, args: tuple[Any, ...]) -> list[Passage]:
        with self._conn() as db:
            rows = db.execute(self._PASSAGE + sql, args).fetchall()
        return [Passage(*r) for r in rows]

    def passages(self, collection: str, article_id: int | None = None) -> list[Passage]:
        if article_id is None:
            return self._passages("WHERE collection = %s ORDER BY id", (collection,))
        return self._passages(
            "WHERE collection = %s AND article_id = %s ORDER BY id", (collection, article_id)
        )

    def article_passages(self, collection: str, article_id: int) -> list[Passage]:
        """An article's passages in order, with the subheading each stands under."""
        with self._conn() as db:
            rows = db.execute(
                "SELECT id, article_id, paragraph, piece, text, heading FROM passages "
                "WHERE collection = %s AND article_id = %s ORDER BY id",
                (collection, article_id),
            ).fetchall()
        return [Passage(*r) for r in rows]

    def leading_passages(
        self, collection: str, article_ids: list[int], paragraphs: int
    ) -> list[Passage]:
        if not article_ids:
            return []
        return self._passages(
            "WHERE collection = %s AND article_id = ANY(%s) AND paragraph <= %s ORDER BY id",
            (collection, list(article_ids), paragraphs),
        )

    def passages_by_id(self, ids: list[int]) -> dict[int, Passage]:
        found = self._passages("WHERE id = ANY(%s)", ([int(i) for i in ids],))
        return {p.id: p for p in found}

    def passage_ids(self, collection: str) -> np.ndarray:
        with self._conn() as db:
            rows = db.execute(
                "SELECT id FROM passages WHERE collection = %s ORDER BY id", (collection,)
            ).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    def signature(self, collection: str) -> tuple[int, int]:
        with self._conn() as db:
            row = db.execute(
                "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM passages WHERE collection = %s",
                (collection,),
            ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def count(self, collection: str) -> tuple[int, int]:
        with self._conn() as db:
            # The passages are counted by every write: COUNT(*) would scan a large collection.
            row = db.execute(
                "SELECT (SELECT COUNT(*) FROM articles WHERE collection = %s), "
                "COALESCE((SELECT passages FROM collections WHERE name = %s), 0)",
                (collection, collection),
            ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def keyword_totals(self, collection: str) -> tuple[int, int]:
        """(passages, tokens) of a collection, kept up to date by every write."""
        with self._conn() as db:
            row = db.execute(
                "SELECT passages, tokens FROM collections WHERE name = %s", (collection,)
            ).fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def iter_embeddings(
        self, collection: str, dim: int, ids: list[int] | None = None, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        last = -1
        while True:
            with self._conn() as db:
                if ids is not None:
                    rows = db.execute(
                        "SELECT id, embedding FROM passages WHERE id = ANY(%s) ORDER BY id",
                        ([int(i) for i in ids],),
                    ).fetchall()
                else:
                    rows = db.execute(
                        "SELECT id, embedding FROM passages WHERE collection = %s AND id > %s "
                        "ORDER BY id LIMIT %s",
                        (collection, last, batch),
                    ).fetchall()
            if not rows:
                return
            yield (
                np.array([r[0] for r in rows], dtype=np.int64),
                np.vstack([np.asarray(r[1], dtype=np.float32) for r in rows]).reshape(-1, dim),
            )
            if ids is not None:
                return
            last = rows[-1][0]

    # re-embedding (see sqlite_store.py): staged beside the old vectors, swapped in at once

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

    def stage_embeddings(
        self, collection: str, model: str, ids: np.ndarray, vectors: np.ndarray
    ) -> None:
        dim = int(vectors.shape[1])
        with self._write(collection) as db, db.cursor() as cur:
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

    # keyword postings (derived from the passages' text; rebuilt by `rebuild`)

    def rebuild_postings(self, collection: str) -> None:
        with self._write(collection) as db:
            _derive_postings(db, collection)

    def refresh_postings(self, collection: str) -> None:
        """Derive the collection's postings again if an older tokenizer derived them."""
        sql = "SELECT tokenizer FROM collections WHERE name = %s"
        found = self._rows(sql, (collection,))
        if not found or found[0]["tokenizer"] >= TOKENIZER_VERSION:
            return
        with self._write(collection) as db:
            row = db.execute(sql, (collection,)).fetchone()
            if row and row[0] < TOKENIZER_VERSION:  # no other process did it meanwhile
                _derive_postings(db, collection)

    def document_frequencies(self, collection: str, terms: list[str]) -> dict[str, int]:
        with self._conn() as db:
            rows = db.execute(
                "SELECT term, COUNT(*) FROM postings WHERE collection = %s AND term = ANY(%s) "
                "GROUP BY term",
                (collection, terms),
            ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

    def bm25(
        self,
        collection: str,
        weights: list[tuple[str, float]],
        avg_length: float,
        *,
        k: int | None = None,
        ids: list[int] | None = None,
    ) -> list[tuple[int, float]]:
        """(passage id, BM25) of the best k passages, or of the given ones, with `weights` the
        query's terms (repeated as often as the question repeats them) and their idf."""
        terms = [t for t, _ in weights]
        idf = [w for _, w in weights]
        sql = (
            "SELECT p.passage_id, SUM(q.idf * p.tf / "
            "(p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / %(avg)s))) AS score "
            "FROM postings p JOIN unnest(%(terms)s::text[], %(idf)s::float8[]) AS q(term, idf) "
            "ON p.term = q.term WHERE p.collection = %(collection)s "
        )
        args: dict[str, Any] = {
            "k1": BM25_K1,
            "b": BM25_B,
            "avg": max(avg_length, 1e-9),
            "terms": terms,
            "idf": idf,
            "collection": collection,
        }
        if ids is not None:
            sql += "AND p.passage_id = ANY(%(ids)s) "
            args["ids"] = [int(i) for i in ids]
        sql += "GROUP BY p.passage_id ORDER BY score DESC, p.passage_id"
        if k is not None:
            sql += " LIMIT %(k)s"
            args["k"] = k
        with self._conn() as db:
            rows = db.execute(sql, args).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

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
            db.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, k)}")
            # The scan goes on past ef_search until the collection's top k are found.
            sql = (
                f"SELECT id, -(embedding::vector({dim}) <#> %(q)s::vector({dim})) AS score "
                f"FROM passages WHERE collection = %(c)s AND vector_dims(embedding) = {dim} "
                f"ORDER BY embedding::vector({dim}) <#> %(q)s::vector({dim}) LIMIT %(k)s"
            )
        else:
            # One scan of the whole index, then the collection's rows among what it found.
            beam = max(HNSW_EF_FILTERED, k)
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


class PgKeywords:
    """The keyword side of one question over PostgreSQL postings: a collection, or some of its
    passages (one article, a follow-up's sources) weighed with the whole collection's idf."""

    def __init__(self, store: PgStore, collection: str, ids: list[int] | None = None) -> None:
        self.store, self.collection, self.ids = store, collection, ids
        self._df: dict[str, int] = {}

    @functools.cached_property
    def _totals(self) -> tuple[int, float]:
        # Read when first needed: respelling a question (frequencies alone) needs no totals.
        total, tokens = self.store.keyword_totals(self.collection)
        return total, tokens / total if total else 1.0

    @property
    def total(self) -> int:
        return self._totals[0]

    @property
    def avg_length(self) -> float:
        return self._totals[1]

    def __len__(self) -> int:
        return len(self.ids) if self.ids is not None else self.total

    def _weights(self, query: str) -> list[tuple[str, float]]:
        tokens = tokenize(query)
        self._fetch(tokens)
        # Words in no passage are left out, as bm25s leaves out words not in its vocabulary.
        return [(t, self.idf(t)) for t in tokens if self._df.get(t)]

    def _fetch(self, terms: list[str]) -> None:
        missing = [t for t in dict.fromkeys(terms) if t not in self._df]
        if missing:
            found = self.store.document_frequencies(self.collection, missing)
            self._df.update({t: found.get(t, 0) for t in missing})

    def frequencies(self, terms: list[str]) -> dict[str, int]:
        """How many passages of the collection hold each term; a term in none is left out."""
        self._fetch(terms)
        return {t: self._df[t] for t in terms if self._df[t]}

    def idf(self, term: str) -> float:
        self._fetch([term])
        df = self._df[term]
        return float(np.log(1 + (self.total - df + 0.5) / (df + 0.5)))

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        weights = self._weights(query)
        if not weights or k <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        found = self.store.bm25(self.collection, weights, self.avg_length, k=k, ids=self.ids)
        found = [(pid, s) for pid, s in found if s > 0]
        return (
            np.array([s for _, s in found], dtype=np.float32),
            np.array([pid for pid, _ in found], dtype=np.int64),
        )

    def scores(self, query: str, ids: list[int]) -> dict[int, float]:
        weights = self._weights(query)
        out = dict.fromkeys(ids, 0.0)
        if weights and ids:
            out.update(self.store.bm25(self.collection, weights, self.avg_length, ids=ids))
        return out


class PgBackend(PassageReads):
    """One collection's retrieval over PostgreSQL: nothing held in memory between questions,
    so every process sees every other's writes at once."""

    def __init__(self, store: PgStore, collection: str) -> None:
        self.store: PgStore = store
        self.collection = collection
        self._postings_checked = False

    def _dim(self) -> int | None:
        model = self.store.collection_model(self.collection)
        return model[1] if model else None

    def dense(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        dim = self._dim()
        total = self.store.keyword_totals(self.collection)[0]
        if dim is None or total == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        found = self.store.nearest(self.collection, query, k, dim, approximate=total > EXACT_LIMIT)
        return (
            np.array([s for _, s in found], dtype=np.float32),
            np.array([pid for pid, _ in found], dtype=np.int64),
        )

    def cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        return self.store.cosines(query, ids)

    def keywords(self, article_ids: Container[int] | None = None) -> PgKeywords:
        # Postings are derived data, like the embedded store's saved keyword index: words that
        # an older tokenizer wrote would never match a question's. Checked at the first keyword
        # search, which runs off the bot's event loop, not when the collection is opened.
        if not self._postings_checked:
            self.store.refresh_postings(self.collection)
            self._postings_checked = True
        if article_ids is None:
            return PgKeywords(self.store, self.collection)
        ids = [p.id for p in self.article_passages(article_ids)]
        return PgKeywords(self.store, self.collection, ids)

    # upkeep: PostgreSQL keeps its indexes current with every transaction

    def changed(self) -> None:
        pass

    def nbytes(self) -> int:
        return 0

    def unload(self) -> None:
        pass

    def empty(self) -> bool:
        """Whether nothing is searchable yet: one query, where `state` takes three."""
        return self.store.keyword_totals(self.collection)[0] == 0

    def state(self) -> IndexState:
        total = self.store.keyword_totals(self.collection)[0]
        dim = self._dim()
        if dim is None or total == 0:
            return IndexState(0, "none", 0)
        if total > EXACT_LIMIT:
            return IndexState(
                total, "hnsw", self.store.vector_index_bytes(dim), self.store.approximate_search
            )
        return IndexState(total, "flat", self.store.vector_index_bytes(dim))

    def rebuild(self) -> IndexState:
        """Derive the keyword postings again from the passages (the vectors need no rebuild)."""
        self.store.rebuild_postings(self.collection)
        return self.state()


def _vector_text(vector: np.ndarray) -> str:
    """A vector as pgvector reads it in COPY's text format: shortest round-trip floats."""
    return "[" + ",".join(map(repr, vector.tolist())) + "]"


def _pgvector_version(db: psycopg.Connection[Any]) -> tuple[int, ...]:
    row = db.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    return tuple(int(x) for x in re.findall(r"\d+", row[0])[:3]) if row else (0,)


def _dotted(version: tuple[int, ...]) -> str:
    return ".".join(map(str, version))


def _derive_postings(db: psycopg.Connection[Any], collection: str) -> None:
    """The collection's postings and totals from its passages, with this tokenizer."""
    db.execute("DELETE FROM postings WHERE collection = %s", (collection,))
    rows = db.execute(
        "SELECT p.id, a.title, p.text FROM passages p JOIN articles a "
        "ON a.id = p.article_id WHERE p.collection = %s",
        (collection,),
    ).fetchall()
    total = 0
    with db.cursor() as cur:
        for pid, title, text in rows:
            terms = _terms(title, text)
            length = max(1, sum(terms.values()))
            total += length
            cur.executemany(
                "INSERT INTO postings VALUES (%s,%s,%s,%s,%s)",
                [(collection, t, pid, n, length) for t, n in terms.items()],
            )
            db.execute("UPDATE passages SET length = %s WHERE id = %s", (length, pid))
    db.execute(
        "UPDATE collections SET passages = %s, tokens = %s, tokenizer = %s WHERE name = %s",
        (len(rows), total, TOKENIZER_VERSION, collection),
    )


def _set_model(db: psycopg.Connection[Any], collection: str, model: str, dim: int) -> None:
    db.execute(
        "INSERT INTO collections (name, model, dim, created_at, tokenizer) "
        "VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (name) DO UPDATE SET model = excluded.model, dim = excluded.dim",
        (collection, model, dim, _now(), TOKENIZER_VERSION),
    )


def _find_existing(
    db: psycopg.Connection[Any], collection: str, content_hash: str, url: str | None
) -> Article | None:
    with db.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            PgStore._ARTICLE_SELECT + "WHERE a.collection = %s AND (a.content_hash = %s "
            "OR (%s::text IS NOT NULL AND a.url = %s)) ORDER BY a.id LIMIT 1",
            (collection, content_hash, url, url),
        ).fetchone()
    return article_from_row(row) if row else None


def _insert_passages(
    db: psycopg.Connection[Any],
    collection: str,
    article_id: int,
    title: str,
    passages: list[tuple[int, int, str, str | None]],  # paragraph, piece, text, heading
    vectors: np.ndarray,
) -> None:
    if not passages:
        return
    terms = [_terms(title, text) for _, _, text, _ in passages]
    # bm25s counts an empty passage as one word
    lengths = [max(1, sum(t.values())) for t in terms]
    # Ids drawn first, then the rows copied: COPY is several times faster than row inserts, and
    # an article of thousands of passages (or a migration, or a benchmark) is one stream.
    ids = [
        int(r[0])
        for r in db.execute(
            "SELECT nextval(pg_get_serial_sequence('passages', 'id')) FROM generate_series(1, %s)",
            (len(passages),),
        ).fetchall()
    ]
    with db.cursor().copy(
        "COPY passages (id, article_id, collection, paragraph, piece, text, heading, length, "
        "embedding) FROM STDIN"
    ) as copy:
        for i, (paragraph, piece, text, heading) in enumerate(passages):
            copy.write_row(
                (
                    ids[i],
                    article_id,
                    collection,
                    paragraph,
                    piece,
                    text,
                    heading,
                    lengths[i],
                    _vector_text(vectors[i]),
                )
            )
    with db.cursor().copy("COPY postings FROM STDIN") as copy:
        for pid, passage_terms, length in zip(ids, terms, lengths, strict=True):
            for term, n in passage_terms.items():
                copy.write_row((collection, term, pid, n, length))
    db.execute(
        "UPDATE collections SET passages = passages + %s, tokens = tokens + %s WHERE name = %s",
        (len(passages), sum(lengths), collection),
    )


def _find_similar(
    db: psycopg.Connection[Any], collection: str, fingerprint: Fingerprint
) -> Article | None:
    """The stored article most like this one, if any is at least SIMILAR: only those sharing a
    band's bucket with it are compared."""
    rows = db.execute(
        "SELECT s.article_id, s.signature FROM article_signatures s WHERE s.article_id IN "
        "(SELECT article_id FROM signature_bands b JOIN unnest(%s::int[], %s::bigint[]) "
        "AS q(band, bucket) ON b.band = q.band AND b.bucket = q.bucket WHERE b.collection = %s)",
        (list(range(len(fingerprint.buckets))), fingerprint.buckets, collection),
    ).fetchall()
    scored = [(fingerprint.similarity(np.frombuffer(r[1], dtype=np.uint32)), r[0]) for r in rows]
    best = max(scored, default=(0.0, 0))
    if best[0] < SIMILAR:
        return None
    return _find_by_id(db, collection, best[1])


def _find_by_id(db: psycopg.Connection[Any], collection: str, article_id: int) -> Article | None:
    with db.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            PgStore._ARTICLE_SELECT + "WHERE a.collection = %s AND a.id = %s",
            (collection, article_id),
        ).fetchone()
    return article_from_row(row) if row else None


def _sign(
    db: psycopg.Connection[Any], collection: str, article_id: int, fingerprint: Fingerprint
) -> None:
    db.execute(
        "INSERT INTO article_signatures (article_id, collection, signature) VALUES (%s,%s,%s) "
        "ON CONFLICT (article_id) DO UPDATE SET signature = excluded.signature",
        (article_id, collection, fingerprint.signature.astype(np.uint32).tobytes()),
    )
    with db.cursor() as cur:
        cur.executemany(
            "INSERT INTO signature_bands VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING",
            [(collection, b, key, article_id) for b, key in enumerate(fingerprint.buckets)],
        )


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
