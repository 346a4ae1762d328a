"""Storing articles: each with its passages, vectors and postings in one transaction under its
collection's write lock, found again by its text, its URL or a near-duplicate's signature,
copied from another store as it was, and removed with what it added to the collection's
counters."""

from __future__ import annotations

from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row

from index.ingest.near_duplicates import SIMILAR, Fingerprint
from index.ingest.terms import TOKENIZER_VERSION
from index.records import Article, Document, Passage, SummarySentence
from index.storage import sentence_rows, summary_rows
from index.storage.adding import NewArticle, add_article, added_or_present
from index.storage.postgres.connection import _now
from index.storage.postgres.keywords import _terms
from index.storage.postgres.passages import PgPassages
from index.storage.sentence_rows import SentenceRows
from index.storage.sqlite_store import article_from_row

__all__ = ["PgArticles"]


class PgArticles(PgPassages):
    """The store's articles; their passages are read as PgPassages reads them."""

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

    def collection_languages(self, collection: str) -> dict[str, int]:
        rows = self._rows(
            "SELECT COALESCE(language, 'en') AS language, COUNT(*) AS n FROM articles "
            "WHERE collection = %s GROUP BY 1",
            (collection,),
        )
        return {str(r["language"]): int(r["n"]) for r in rows}

    def set_article_languages(self, collection: str, languages: dict[int, str | None]) -> None:
        with self._write(collection) as db:
            for aid, lang in languages.items():
                db.execute(
                    "UPDATE articles SET language = %s WHERE collection = %s AND id = %s",
                    (lang, collection, aid),
                )

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
        """Store an article with its passages, vectors and postings in one transaction; with a
        fingerprint, an article like a stored one counts as present too (see sqlite_store.py)."""
        with self._write(collection) as db:
            found = add_article(
                _PgAdd(db, collection),
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

    def summaries(self, collection: str, ids: list[int]) -> dict[int, list[SummarySentence]]:
        with self._conn() as db:
            return summary_rows.read(db, "%s", collection, ids)

    def set_summaries(self, collection: str, summaries: dict[int, list[SummarySentence]]) -> None:
        with self._write(collection) as db:
            summary_rows.write(db, "%s", collection, summaries)

    def copy_article(
        self,
        article: Article,
        passages: list[Passage],
        vectors: np.ndarray,
        fingerprint: Fingerprint,
        sentences: SentenceRows | None = None,
        summary: list[SummarySentence] | None = None,
    ) -> tuple[Article, bool]:
        """Store an article from another store as it was (its number, who added it and when,
        its vectors and sentence vectors); (the present one, False) when its text is already in
        the collection."""
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
                "added_by, added_at, content_hash, source, paragraphs, language) SELECT %s, "
                # a number already given here (to an article added since) gets the next free one
                "CASE WHEN %s THEN COALESCE(MAX(number), 0) + 1 ELSE %s END, "
                "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s FROM articles WHERE collection = %s "
                "RETURNING id",
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
                    article.language,
                    collection,
                ),
            ).fetchone()
            assert row is not None
            article_id = int(row[0])
            texts = [(p.paragraph, p.piece, p.text, p.heading) for p in passages]
            ids = _insert_passages(
                db, collection, article_id, article.title, article.language, texts, vectors
            )
            if sentences is not None:
                sentence_rows.write(db, "%s", ids, sentences)
            if summary is not None:
                summary_rows.write(db, "%s", collection, {article_id: summary})
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


def _find_existing(
    db: psycopg.Connection[Any], collection: str, content_hash: str, url: str | None
) -> Article | None:
    with db.cursor(row_factory=dict_row) as cur:
        row = cur.execute(
            PgArticles._ARTICLE_SELECT + "WHERE a.collection = %s AND (a.content_hash = %s "
            "OR (%s::text IS NOT NULL AND a.url = %s)) ORDER BY a.id LIMIT 1",
            (collection, content_hash, url, url),
        ).fetchone()
    return article_from_row(row) if row else None


# The types of the passage columns COPY writes, in order (`vector` is registered per connection).
_PASSAGE_COLUMNS = ["int8", "int8", "text", "int4", "int4", "text", "text", "int4", "vector"]


def _insert_passages(
    db: psycopg.Connection[Any],
    collection: str,
    article_id: int,
    title: str,
    language: str | None,
    passages: list[tuple[int, int, str, str | None]],  # paragraph, piece, text, heading
    vectors: np.ndarray,
) -> list[int]:
    """Insert the passages with their vectors and keyword postings; their ids, in order."""
    if not passages:
        return []
    terms = [_terms(title, text, language) for _, _, text, _ in passages]
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
    # Binary: a vector goes as its float32 bytes, not as 384 numbers written out in text.
    with db.cursor().copy(
        "COPY passages (id, article_id, collection, paragraph, piece, text, heading, length, "
        "embedding) FROM STDIN (FORMAT BINARY)"
    ) as copy:
        copy.set_types(_PASSAGE_COLUMNS)
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
                    vectors[i],
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
    return ids


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
            PgArticles._ARTICLE_SELECT + "WHERE a.collection = %s AND a.id = %s",
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


class _PgAdd:
    """The add's statements on PostgreSQL (adding.py), inside the collection's write lock."""

    def __init__(self, db: psycopg.Connection[Any], collection: str) -> None:
        self.db, self.collection = db, collection

    def find_existing(self, content_hash: str, url: str | None) -> Article | None:
        return _find_existing(self.db, self.collection, content_hash, url)

    def find_similar(self, fingerprint: Fingerprint) -> Article | None:
        return _find_similar(self.db, self.collection, fingerprint)

    def next_number(self) -> int:
        row = self.db.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM articles WHERE collection = %s",
            (self.collection,),
        ).fetchone()
        return int(row[0]) if row else 1

    def insert(self, article: NewArticle) -> int:
        db, doc = self.db, article.doc
        db.execute(
            "INSERT INTO collections (name, created_at, tokenizer) VALUES (%s, %s, %s) "
            "ON CONFLICT (name) DO NOTHING",
            (self.collection, _now(), TOKENIZER_VERSION),
        )
        row = db.execute(
            "INSERT INTO articles (collection, number, title, url, site, author, published, "
            "added_by, added_at, content_hash, source, paragraphs, language) "
            "VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s) RETURNING id",
            (
                self.collection,
                article.number,
                doc.title,
                doc.url,
                doc.site,
                doc.author,
                doc.published,
                article.added_by,
                _now(),
                article.content_hash,
                doc.source,
                len(doc.paragraphs),
                doc.language,
            ),
        ).fetchone()
        assert row is not None
        article_id = int(row[0])
        ids = _insert_passages(
            db,
            self.collection,
            article_id,
            doc.title,
            doc.language,
            article.passages,
            article.vectors,
        )
        if article.sentences is not None:
            sentence_rows.write(db, "%s", ids, article.sentences)
        if article.summary is not None:
            summary_rows.write(db, "%s", self.collection, {article_id: article.summary})
        return article_id

    def sign(self, article_id: int, fingerprint: Fingerprint) -> None:
        _sign(self.db, self.collection, article_id, fingerprint)
