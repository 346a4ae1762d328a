"""The SQLite store, source of truth for articles, passages and embeddings (WAL mode).

An article is written with all its passages and embeddings in one transaction, so a crash leaves
either the whole article or nothing. Several processes may write: SQLite's lock serializes them
and the busy timeout makes each wait its turn instead of failing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from index.errors import StorageError
from index.ingest.near_duplicates import SIMILAR, Fingerprint
from index.records import Article, Document, Feed, Passage

__all__ = ["Passage", "Store", "article_from_row", "feed_from_row"]


F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    """One connection is shared by the bot's worker threads; a lock keeps transactions whole.

    SQLite's own failures (a full disk, a lock held past the busy timeout, a damaged file) become
    a StorageError whose message says what to do, instead of a traceback.
    """

    @functools.wraps(method)
    def wrapper(self: Store, *args: Any, **kwargs: Any) -> Any:
        try:
            with self._lock:
                return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            error = _storage_error(exc, self.path)
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


def _storage_error(exc: sqlite3.Error, path: Path) -> StorageError | None:
    """The user-facing error for one of SQLite's; None for the rest (bugs, to show as they are)."""
    code = _code(exc)
    if code in _BUSY:
        return StorageError(
            "Another process kept the database busy for too long; try again in a minute."
        )
    if code == sqlite3.SQLITE_FULL:
        return StorageError(f"The disk holding {path.parent} is full; free some space and retry.")
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


_SCHEMA = [
    # version 1
    """
    CREATE TABLE collections (
        name TEXT PRIMARY KEY,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE articles (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        collection TEXT NOT NULL REFERENCES collections(name),
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
        -- AUTOINCREMENT: ids are never reused, so (count, max id) tells when the index is stale
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        paragraph INTEGER NOT NULL,
        piece INTEGER NOT NULL,
        text TEXT NOT NULL,
        embedding BLOB NOT NULL
    );
    CREATE INDEX passages_collection ON passages(collection, id);
    CREATE INDEX passages_article ON passages(article_id);
    """,
    # version 2: vectors from a re-embedding under way, swapped in whole when it completes
    """
    CREATE TABLE staged_embeddings (
        passage_id INTEGER PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        model TEXT NOT NULL,
        dim INTEGER NOT NULL,
        embedding BLOB NOT NULL
    );
    CREATE INDEX staged_collection ON staged_embeddings(collection, model, dim);
    """,
    # version 3: news feeds a collection follows, and the entries already taken from each
    """
    CREATE TABLE feeds (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        collection TEXT NOT NULL,
        url TEXT NOT NULL,
        title TEXT,
        added_by TEXT,
        added_at TEXT NOT NULL,
        checked_at TEXT,
        UNIQUE (collection, url)
    );
    CREATE TABLE feed_entries (
        feed_id INTEGER NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
        entry TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        PRIMARY KEY (feed_id, entry)
    );
    """,
    # version 4: the number a server's members see for an article, counted in its collection
    # alone, so that no server can count the others' articles from the numbers it is shown
    """
    ALTER TABLE articles ADD COLUMN number INTEGER;
    UPDATE articles SET number = (
        SELECT COUNT(*) FROM articles b
        WHERE b.collection = articles.collection AND b.id <= articles.id
    );
    CREATE INDEX articles_number ON articles(collection, number);
    """,
    # version 5: the subheading a passage stands under (unknown for passages stored before:
    # a refresh brings it), and each article's MinHash signature with its bands' buckets, so a
    # near-duplicate is found without reading any article's text. Older articles are signed
    # when their collection is next added to (sign_articles).
    """
    ALTER TABLE passages ADD COLUMN heading TEXT;
    CREATE TABLE article_signatures (
        article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        signature BLOB NOT NULL
    );
    CREATE TABLE signature_bands (
        collection TEXT NOT NULL,
        band INTEGER NOT NULL,
        bucket INTEGER NOT NULL,
        article_id INTEGER NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
        PRIMARY KEY (collection, band, bucket, article_id)
    ) WITHOUT ROWID;
    CREATE INDEX signature_bands_article ON signature_bands(article_id);
    """,
]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """All collections of one data folder, in one SQLite file."""

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
        db: sqlite3.Connection | None = None
        try:
            db = self._db = sqlite3.connect(
                path, timeout=busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            db.row_factory = sqlite3.Row
            self._enable_wal(busy_timeout_s)
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.Error as exc:
            if db is not None:
                db.close()
            error = _storage_error(exc, path)
            if error is None:
                raise
            raise error from exc

    @_locked
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
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            for number, script in enumerate(_SCHEMA[version:], start=version + 1):
                for statement in script.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version={number}")

    # collections

    @_locked
    def collection_model(self, collection: str) -> tuple[str, int] | None:
        row = self._db.execute(
            "SELECT model, dim FROM collections WHERE name = ?", (collection,)
        ).fetchone()
        return (row["model"], row["dim"]) if row else None

    @_locked
    def set_collection_model(self, collection: str, model: str, dim: int) -> None:
        self._db.execute(
            "INSERT INTO collections (name, model, dim, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET model = excluded.model, dim = excluded.dim",
            (collection, model, dim, _now()),
        )

    @_locked
    def collection_names(self) -> list[str]:
        """Every collection that holds an article or follows a feed."""
        rows = self._db.execute(
            "SELECT collection FROM articles UNION SELECT collection FROM feeds ORDER BY 1"
        )
        return [r[0] for r in rows]

    # articles

    _ARTICLE_SELECT = (
        "SELECT a.*, (SELECT COUNT(*) FROM passages p WHERE p.article_id = a.id) AS passages "
        "FROM articles a "
    )

    @_locked
    def find_existing(self, collection: str, content_hash: str, url: str | None) -> Article | None:
        row = self._db.execute(
            self._ARTICLE_SELECT
            + "WHERE a.collection = ? AND (a.content_hash = ? OR (? IS NOT NULL AND a.url = ?))",
            (collection, content_hash, url, url),
        ).fetchone()
        return article_from_row(row) if row else None

    @_locked
    def find_similar(self, collection: str, fingerprint: Fingerprint) -> Article | None:
        """The stored article most like this one, if any is at least SIMILAR to it: only the
        articles that share a band's bucket with it are compared."""
        # One point lookup in the bands' primary key per band (an OR of them scans instead).
        lookup = "SELECT article_id FROM signature_bands WHERE collection = ? AND band = ? "
        lookup += "AND bucket = ?"
        lookups = " UNION ".join([lookup] * len(fingerprint.buckets))
        rows = self._db.execute(
            f"SELECT s.article_id, s.signature FROM ({lookups}) c "
            "JOIN article_signatures s ON s.article_id = c.article_id",
            [v for band in enumerate(fingerprint.buckets) for v in (collection, *band)],
        ).fetchall()
        scored = [
            (fingerprint.similarity(np.frombuffer(r[1], dtype=np.uint32)), r[0]) for r in rows
        ]
        best = max(scored, default=(0.0, 0))
        return self.get_article(collection, best[1]) if best[0] >= SIMILAR else None

    def _sign(self, collection: str, article_id: int, fingerprint: Fingerprint) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO article_signatures (article_id, collection, signature) "
            "VALUES (?, ?, ?)",
            (article_id, collection, fingerprint.signature.astype(np.uint32).tobytes()),
        )
        self._db.executemany(
            "INSERT OR IGNORE INTO signature_bands (collection, band, bucket, article_id) "
            "VALUES (?, ?, ?, ?)",
            [(collection, b, key, article_id) for b, key in enumerate(fingerprint.buckets)],
        )

    @_locked
    def unsigned_articles(self, collection: str, limit: int = 100) -> dict[int, list[str]]:
        """Articles stored before signatures were (at most `limit`), with their passages' text."""
        ids = [
            r[0]
            for r in self._db.execute(
                "SELECT id FROM articles a WHERE collection = ? AND NOT EXISTS "
                "(SELECT 1 FROM article_signatures s WHERE s.article_id = a.id) LIMIT ?",
                (collection, limit),
            )
        ]
        return {i: [p.text for p in self.passages(collection, i)] for i in ids}

    @_locked
    def sign_articles(self, collection: str, fingerprints: dict[int, Fingerprint]) -> None:
        with self._write():
            for article_id, fingerprint in fingerprints.items():
                # An article removed meanwhile is not signed.
                found = self._db.execute("SELECT 1 FROM articles WHERE id = ?", (article_id,))
                if found.fetchone():
                    self._sign(collection, article_id, fingerprint)

    @_locked
    def get_article(self, collection: str, article_id: int) -> Article | None:
        row = self._db.execute(
            self._ARTICLE_SELECT + "WHERE a.collection = ? AND a.id = ?", (collection, article_id)
        ).fetchone()
        return article_from_row(row) if row else None

    @_locked
    def list_articles(self, collection: str) -> list[Article]:
        rows = self._db.execute(
            self._ARTICLE_SELECT + "WHERE a.collection = ? ORDER BY a.added_at DESC, a.id DESC",
            (collection,),
        ).fetchall()
        return [article_from_row(r) for r in rows]

    @_locked
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
        """Store an article with its passages in one transaction; (article, False) if present.

        With a fingerprint, an article like a stored one counts as present too, and is signed.
        `same_url_is_new`: a new version of a page (a refresh) is matched on its exact text
        alone, not on its URL or on being like the version it replaces.
        """
        with self._write():
            # Checked again under the write lock: another process may have added it meanwhile.
            url = None if same_url_is_new else doc.url
            existing = self.find_existing(collection, content_hash, url)
            if not existing and fingerprint and not same_url_is_new:
                existing = self.find_similar(collection, fingerprint)
            if existing:
                return existing, False
            (number,) = self._db.execute(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM articles WHERE collection = ?",
                (collection,),
            ).fetchone()
            cur = self._db.execute(
                "INSERT INTO articles (collection, title, url, site, author, published, added_by, "
                "added_at, content_hash, source, paragraphs, number) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    collection,
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
                    number,
                ),
            )
            article_id = int(cur.lastrowid or 0)
            vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
            headings = doc.headings or [None] * len(doc.paragraphs)
            self._db.executemany(
                "INSERT INTO passages (article_id, collection, paragraph, piece, text, heading, "
                "embedding) VALUES (?,?,?,?,?,?,?)",
                [
                    (
                        article_id,
                        collection,
                        para,
                        piece,
                        text,
                        headings[para - 1],
                        vector.tobytes(),
                    )
                    for (para, piece, text), vector in zip(passages, vectors, strict=True)
                ],
            )
            if fingerprint:
                self._sign(collection, article_id, fingerprint)
        article = self.get_article(collection, article_id)
        assert article is not None
        return article, True

    @_locked
    def delete_article(self, collection: str, article_id: int) -> None:
        with self._write():
            self._db.execute("DELETE FROM passages WHERE article_id = ?", (article_id,))
            self._db.execute(
                "DELETE FROM articles WHERE collection = ? AND id = ?", (collection, article_id)
            )

    # passages

    @_locked
    def passages(self, collection: str, article_id: int | None = None) -> list[Passage]:
        sql = "SELECT id, article_id, paragraph, piece, text FROM passages WHERE collection = ?"
        args: tuple[object, ...] = (collection,)
        if article_id is not None:
            sql += " AND article_id = ?"
            args += (article_id,)
        rows = self._db.execute(sql + " ORDER BY id", args).fetchall()
        return [Passage(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    @_locked
    def article_passages(self, collection: str, article_id: int) -> list[Passage]:
        """An article's passages in order, with the subheading each stands under."""
        rows = self._db.execute(
            "SELECT id, article_id, paragraph, piece, text, heading FROM passages "
            "WHERE collection = ? AND article_id = ? ORDER BY id",
            (collection, article_id),
        ).fetchall()
        return [Passage(*r) for r in rows]

    @_locked
    def leading_passages(
        self, collection: str, article_ids: list[int], paragraphs: int
    ) -> list[Passage]:
        """The passages of each article's first `paragraphs` paragraphs."""
        if not article_ids:
            return []
        marks = ",".join("?" * len(article_ids))
        rows = self._db.execute(
            "SELECT id, article_id, paragraph, piece, text FROM passages WHERE collection = ? "
            f"AND article_id IN ({marks}) AND paragraph <= ? ORDER BY id",
            (collection, *article_ids, paragraphs),
        ).fetchall()
        return [Passage(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    @_locked
    def passages_by_id(self, ids: list[int]) -> dict[int, Passage]:
        out: dict[int, Passage] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self._db.execute(
                "SELECT id, article_id, paragraph, piece, text FROM passages "
                f"WHERE id IN ({marks})",
                chunk,
            ):
                out[r[0]] = Passage(r[0], r[1], r[2], r[3], r[4])
        return out

    @_locked
    def passage_ids(self, collection: str) -> np.ndarray:
        rows = self._db.execute(
            "SELECT id FROM passages WHERE collection = ? ORDER BY id", (collection,)
        ).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    @_locked
    def signature(self, collection: str) -> tuple[int, int]:
        """(passage count, highest passage id): changes whenever passages are added or removed."""
        row = self._db.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM passages WHERE collection = ?",
            (collection,),
        ).fetchone()
        return int(row[0]), int(row[1])

    @_locked
    def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's PRAGMA data_version): checked
        in microseconds, where `signature` counts passages (0.4 s at a million)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    @_locked
    def count(self, collection: str) -> tuple[int, int]:
        articles = self._db.execute(
            "SELECT COUNT(*) FROM articles WHERE collection = ?", (collection,)
        ).fetchone()[0]
        passages = self._db.execute(
            "SELECT COUNT(*) FROM passages WHERE collection = ?", (collection,)
        ).fetchone()[0]
        return int(articles), int(passages)

    def iter_embeddings(
        self, collection: str, dim: int, ids: list[int] | None = None, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (ids, vectors) in batches, for rebuilding the index without re-embedding."""
        if ids is not None:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                with self._lock:
                    rows = self._db.execute(
                        f"SELECT id, embedding FROM passages WHERE id IN ({marks})", chunk
                    ).fetchall()
                yield _to_arrays(rows, dim)
            return
        last = -1
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, embedding FROM passages WHERE collection = ? AND id > ? "
                    "ORDER BY id LIMIT ?",
                    (collection, last, batch),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield _to_arrays(rows, dim)

    # re-embedding: new vectors are staged beside the old ones and swapped in all at once, so
    # a collection never mixes two models' vectors, and a killed re-embedding resumes.

    @_locked
    def unstaged_passages(self, collection: str, model: str, dim: int) -> list[Passage]:
        """The passages that still need a vector from `model`; stale staging is dropped."""
        with self._write():
            self._db.execute(
                "DELETE FROM staged_embeddings WHERE collection = ? AND (model != ? OR dim != ?)",
                (collection, model, dim),
            )
        rows = self._db.execute(
            "SELECT id, article_id, paragraph, piece, text FROM passages p WHERE collection = ? "
            "AND NOT EXISTS (SELECT 1 FROM staged_embeddings s WHERE s.passage_id = p.id) "
            "ORDER BY id",
            (collection,),
        ).fetchall()
        return [Passage(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    @_locked
    def stage_embeddings(
        self, collection: str, model: str, ids: np.ndarray, vectors: np.ndarray
    ) -> None:
        dim = int(vectors.shape[1])
        with self._write():
            # INSERT ... SELECT: a passage removed meanwhile is skipped, not an error.
            self._db.executemany(
                "INSERT OR REPLACE INTO staged_embeddings "
                "SELECT id, ?, ?, ?, ? FROM passages WHERE id = ?",
                [
                    (collection, model, dim, vectors[i].astype(np.float32).tobytes(), int(pid))
                    for i, pid in enumerate(ids)
                ],
            )

    @_locked
    def swap_staged(self, collection: str, model: str, dim: int) -> bool:
        """Swap every staged vector in with the model's name, in one transaction; False (and
        nothing changed) while some passage, added meanwhile, still has none."""
        with self._write():
            missing = self._db.execute(
                "SELECT 1 FROM passages p WHERE collection = ? AND NOT EXISTS "
                "(SELECT 1 FROM staged_embeddings s WHERE s.passage_id = p.id "
                "AND s.model = ? AND s.dim = ?) LIMIT 1",
                (collection, model, dim),
            ).fetchone()
            if missing:
                return False
            self._db.execute(
                "UPDATE passages SET embedding = (SELECT embedding FROM staged_embeddings s "
                "WHERE s.passage_id = passages.id) WHERE collection = ?",
                (collection,),
            )
            self._db.execute("DELETE FROM staged_embeddings WHERE collection = ?", (collection,))
            self.set_collection_model(collection, model, dim)
            return True

    # feeds

    @_locked
    def add_feed(
        self, collection: str, url: str, title: str | None, added_by: str | None
    ) -> tuple[Feed, bool]:
        """The feed, stored once per collection; False when it was already followed."""
        with self._write():
            found = self._db.execute(
                "SELECT * FROM feeds WHERE collection = ? AND url = ?", (collection, url)
            ).fetchone()
            if found:
                return feed_from_row(found), False
            cursor = self._db.execute(
                "INSERT INTO feeds (collection, url, title, added_by, added_at) VALUES (?,?,?,?,?)",
                (collection, url, title, added_by, _now()),
            )
            row = self._db.execute("SELECT * FROM feeds WHERE id = ?", (cursor.lastrowid,))
            return feed_from_row(row.fetchone()), True

    @_locked
    def feed_collections(self) -> list[str]:
        """The collections that follow at least one feed."""
        rows = self._db.execute("SELECT DISTINCT collection FROM feeds ORDER BY collection")
        return [r[0] for r in rows]

    @_locked
    def list_feeds(self, collection: str) -> list[Feed]:
        rows = self._db.execute(
            "SELECT * FROM feeds WHERE collection = ? ORDER BY id", (collection,)
        ).fetchall()
        return [feed_from_row(r) for r in rows]

    @_locked
    def delete_feed(self, collection: str, feed_id: int) -> Feed | None:
        with self._write():
            row = self._db.execute(
                "SELECT * FROM feeds WHERE collection = ? AND id = ?", (collection, feed_id)
            ).fetchone()
            if row:
                self._db.execute("DELETE FROM feeds WHERE id = ?", (feed_id,))
            return feed_from_row(row) if row else None

    @_locked
    def seen_entries(self, feed_id: int) -> set[str]:
        rows = self._db.execute("SELECT entry FROM feed_entries WHERE feed_id = ?", (feed_id,))
        return {r[0] for r in rows}

    @_locked
    def mark_seen(self, feed_id: int, entries: list[str]) -> None:
        """Record entries as taken (or given up on), and the feed as checked now."""
        now = _now()
        with self._write():
            # A feed removed meanwhile has nothing to record.
            if not self._db.execute("SELECT 1 FROM feeds WHERE id = ?", (feed_id,)).fetchone():
                return
            self._db.executemany(
                "INSERT OR IGNORE INTO feed_entries (feed_id, entry, seen_at) VALUES (?,?,?)",
                [(feed_id, entry, now) for entry in entries],
            )
            self._db.execute("UPDATE feeds SET checked_at = ? WHERE id = ?", (now, feed_id))


def article_from_row(row: Mapping[str, Any]) -> Article:
    """An article from a row of either store: the articles' columns and a passage count."""
    return Article(
        id=row["id"],
        collection=row["collection"],
        title=row["title"],
        url=row["url"],
        site=row["site"],
        author=row["author"],
        published=row["published"],
        added_by=row["added_by"],
        added_at=row["added_at"],
        content_hash=row["content_hash"],
        source=row["source"],
        paragraphs=row["paragraphs"],
        passages=row["passages"],
        number=row["number"],
    )


def feed_from_row(row: Mapping[str, Any]) -> Feed:
    return Feed(
        id=row["id"],
        collection=row["collection"],
        url=row["url"],
        title=row["title"],
        added_by=row["added_by"],
        added_at=row["added_at"],
        checked_at=row["checked_at"],
    )


def _to_arrays(rows: list[sqlite3.Row], dim: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim)
    return ids, vectors
