"""The SQLite store's schema on disk: a new file is made from the tables' one declaration
(tables.py) at the current version; a file is at the version in its `PRAGMA user_version`, and
one from an earlier articlebot is brought up to date in place by the upgrades past it (the
history below: version 1 as it was first made, then each change).
"""

from __future__ import annotations

import sqlite3

from index.storage.tables import SCHEMA_VERSION, statements

__all__ = ["UPGRADES", "migrate"]


UPGRADES = [
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
    # version 6: the language each article is written in (analysis.py reads its words by it);
    # NULL for an article stored before, read as English until `rebuild` identifies it
    """
    ALTER TABLE articles ADD COLUMN language TEXT
    """,
    # version 7: each passage's sentence vectors, read in the passage by the model named (float16
    # rows, one per sentence as its language splits it, and a digest of that split), that quotes
    # are chosen by; none for a passage stored before, whose quotes are chosen without them
    """
    CREATE TABLE sentence_vectors (
        passage_id INTEGER PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        split INTEGER NOT NULL,
        vectors BLOB NOT NULL
    )
    """,
    # version 8: each article's summary, its own sentences chosen when it was added (a JSON
    # list of [paragraph, sentence]); an article stored before gets its own when first asked
    # for, or at `rebuild`
    """
    CREATE TABLE summaries (
        article_id INTEGER PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        sentences TEXT NOT NULL
    )
    """,
    # version 9: nothing in the store; PostgreSQL's conversations and votes gained `written_by`
    # (in a data folder they live in conversations.db, which adds it on opening), and both
    # databases stand at one version
    "",
]


def migrate(db: sqlite3.Connection) -> None:
    """Make a new file's tables, or run the upgrades past an older file's version; inside the
    caller's write transaction."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        for statement in statements("sqlite"):
            db.execute(statement)
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        return
    upgrade(db, version, SCHEMA_VERSION)


def upgrade(db: sqlite3.Connection, version: int, to: int) -> None:
    """Run the upgrades from `version` to `to` (tests start from version 0 to build history)."""
    for number, script in enumerate(UPGRADES[version:to], start=version + 1):
        for statement in script.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute(f"PRAGMA user_version={number}")
