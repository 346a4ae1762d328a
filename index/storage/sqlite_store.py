"""The SQLite store, source of truth for articles, passages and embeddings (WAL mode).

An article is written with all its passages and embeddings in one transaction, so a crash leaves
either the whole article or nothing. Several processes may write: SQLite's lock serializes them
and the busy timeout makes each wait its turn instead of failing.

The parts: the file, its connection, lock and errors in sqlite_file.py; the tables' versions in
sqlite_schema.py; passages, vectors and re-embedding in sqlite_passages.py; feeds in
sqlite_feeds.py. `Store` puts them together with the articles and their near-duplicates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from index.ingest.near_duplicates import SIMILAR, Fingerprint
from index.records import Article, Document, Passage, SummarySentence
from index.storage import sentence_rows, summary_rows
from index.storage.adding import NewArticle, add_article, added_or_present
from index.storage.sentence_rows import SentenceRows
from index.storage.sqlite_feeds import FeedTables, feed_from_row
from index.storage.sqlite_file import locked, timestamp
from index.storage.sqlite_passages import PassageTables

__all__ = ["Passage", "Store", "article_from_row", "feed_from_row"]


class Store(PassageTables, FeedTables):
    """All collections of one data folder, in one SQLite file."""

    # collections

    @locked
    def collection_names(self) -> list[str]:
        """Every collection that holds an article or follows a feed."""
        rows = self._db.execute(
            "SELECT collection FROM articles UNION SELECT collection FROM feeds ORDER BY 1"
        )
        return [r[0] for r in rows]

    @locked
    def ping(self) -> None:
        self._db.execute("SELECT 1 FROM articles LIMIT 1").fetchall()

    # articles

    _ARTICLE_SELECT = (
        "SELECT a.*, (SELECT COUNT(*) FROM passages p WHERE p.article_id = a.id) AS passages "
        "FROM articles a "
    )

    @locked
    def find_existing(self, collection: str, content_hash: str, url: str | None) -> Article | None:
        row = self._db.execute(
            self._ARTICLE_SELECT
            + "WHERE a.collection = ? AND (a.content_hash = ? OR (? IS NOT NULL AND a.url = ?))",
            (collection, content_hash, url, url),
        ).fetchone()
        return article_from_row(row) if row else None

    @locked
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

    @locked
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

    @locked
    def sign_articles(self, collection: str, fingerprints: dict[int, Fingerprint]) -> None:
        with self._write():
            for article_id, fingerprint in fingerprints.items():
                # An article removed meanwhile is not signed.
                found = self._db.execute("SELECT 1 FROM articles WHERE id = ?", (article_id,))
                if found.fetchone():
                    self._sign(collection, article_id, fingerprint)

    @locked
    def get_article(self, collection: str, article_id: int) -> Article | None:
        row = self._db.execute(
            self._ARTICLE_SELECT + "WHERE a.collection = ? AND a.id = ?", (collection, article_id)
        ).fetchone()
        return article_from_row(row) if row else None

    @locked
    def list_articles(self, collection: str) -> list[Article]:
        rows = self._db.execute(
            self._ARTICLE_SELECT + "WHERE a.collection = ? ORDER BY a.added_at DESC, a.id DESC",
            (collection,),
        ).fetchall()
        return [article_from_row(r) for r in rows]

    def collection_languages(self, collection: str) -> dict[str, int]:
        rows = self._db.execute(
            "SELECT COALESCE(language, 'en'), COUNT(*) FROM articles WHERE collection = ? "
            "GROUP BY 1",
            (collection,),
        ).fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    @locked
    def set_article_languages(self, collection: str, languages: dict[int, str | None]) -> None:
        with self._write():
            self._db.executemany(
                "UPDATE articles SET language = ? WHERE collection = ? AND id = ?",
                [(lang, collection, aid) for aid, lang in languages.items()],
            )

    @locked
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
        sentences: SentenceRows | None = None,
        summary: list[SummarySentence] | None = None,
    ) -> tuple[Article, bool]:
        """Store an article with its passages in one transaction; (article, False) if present
        (adding.py: the same text or URL, or with a fingerprint, a near-duplicate)."""
        with self._write():
            found = add_article(
                _SqliteAdd(self, collection),
                doc,
                content_hash,
                passages,
                embeddings,
                added_by,
                fingerprint=fingerprint,
                same_url_is_new=same_url_is_new,
                sentences=sentences,
                summary=summary,
            )
        return added_or_present(found, lambda i: self.get_article(collection, i))

    @locked
    def summaries(self, collection: str, ids: list[int]) -> dict[int, list[SummarySentence]]:
        return summary_rows.read(self._db, "?", collection, ids)

    @locked
    def set_summaries(self, collection: str, summaries: dict[int, list[SummarySentence]]) -> None:
        with self._write():
            summary_rows.write(self._db, "?", collection, summaries)

    @locked
    def delete_article(self, collection: str, article_id: int) -> None:
        with self._write():
            self._db.execute("DELETE FROM passages WHERE article_id = ?", (article_id,))
            self._db.execute(
                "DELETE FROM articles WHERE collection = ? AND id = ?", (collection, article_id)
            )


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
        language=row["language"],
    )


class _SqliteAdd:
    """The add's statements on the SQLite file (adding.py), inside the store's write lock."""

    def __init__(self, store: Store, collection: str) -> None:
        self.store, self.collection = store, collection

    def find_existing(self, content_hash: str, url: str | None) -> Article | None:
        return self.store.find_existing(self.collection, content_hash, url)

    def find_similar(self, fingerprint: Fingerprint) -> Article | None:
        return self.store.find_similar(self.collection, fingerprint)

    def next_number(self) -> int:
        (number,) = self.store._db.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM articles WHERE collection = ?",
            (self.collection,),
        ).fetchone()
        return int(number)

    def insert(self, article: NewArticle) -> int:
        doc = article.doc
        cur = self.store._db.execute(
            "INSERT INTO articles (collection, title, url, site, author, published, added_by, "
            "added_at, content_hash, source, paragraphs, number, language) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                self.collection,
                doc.title,
                doc.url,
                doc.site,
                doc.author,
                doc.published,
                article.added_by,
                timestamp(),
                article.content_hash,
                doc.source,
                len(doc.paragraphs),
                article.number,
                doc.language,
            ),
        )
        article_id = int(cur.lastrowid or 0)
        self.store._db.executemany(
            "INSERT INTO passages (article_id, collection, paragraph, piece, text, heading, "
            "embedding) VALUES (?,?,?,?,?,?,?)",
            [
                (article_id, self.collection, para, piece, text, heading, vector.tobytes())
                for (para, piece, text, heading), vector in zip(
                    article.passages, article.vectors, strict=True
                )
            ],
        )
        if article.sentences is not None:
            ids = self.store._db.execute(
                "SELECT id FROM passages WHERE article_id = ? ORDER BY id", (article_id,)
            ).fetchall()
            sentence_rows.write(self.store._db, "?", [r[0] for r in ids], article.sentences)
        if article.summary is not None:
            summary_rows.write(self.store._db, "?", self.collection, {article_id: article.summary})
        return article_id

    def sign(self, article_id: int, fingerprint: Fingerprint) -> None:
        self.store._sign(self.collection, article_id, fingerprint)
