"""The database's schema: a new database is made from the tables' one declaration (tables.py,
and the bot's tables from their modules) at the current version; one made by an older
articlebot is brought up to date where it stands by the upgrades past its version (the history
below: version 1 as it was first made, then each change). Whichever process opens the database
first does it, under an advisory lock that others starting together wait on."""

from __future__ import annotations

from typing import Any

import psycopg

from index.storage import collection_settings, conversations
from index.storage.tables import SCHEMA_VERSION, statements

__all__ = ["UPGRADES", "PgSchema", "upgrade"]

UPGRADES = [
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
    conversations.SCHEMA + collection_settings.SCHEMA,
    # version 4: which tokenizer (bm25.TOKENIZER_VERSION) derived a collection's postings, so
    # that a process with a newer one derives them again before it searches (those before: 1)
    """
    ALTER TABLE collections ADD COLUMN tokenizer INTEGER NOT NULL DEFAULT 1
    """,
    # version 5: the indexes the SQLite store has (articles by number, for the next number an
    # add takes and `show`; staged vectors by collection and model), so both databases stand at
    # one schema version with the same indexes
    """
    CREATE INDEX IF NOT EXISTS articles_number ON articles(collection, number);
    CREATE INDEX IF NOT EXISTS staged_collection ON staged_embeddings(collection, model, dim)
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
        passage_id BIGINT PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
        model TEXT NOT NULL,
        split BIGINT NOT NULL,
        vectors BYTEA NOT NULL
    )
    """,
    # version 8: each article's summary, its own sentences chosen when it was added (a JSON
    # list of [paragraph, sentence]); an article stored before gets its own when first asked
    # for, or at `rebuild`
    """
    CREATE TABLE summaries (
        article_id BIGINT PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
        collection TEXT NOT NULL,
        sentences TEXT NOT NULL
    )
    """,
    # version 9: the model whose words each answer, and each vote's answer, was shown in (NULL:
    # the articles' quotes), so votes compare written answers with quoted ones. IF NOT EXISTS:
    # a database upgraded from before version 3 made these tables with the column already.
    """
    ALTER TABLE turns ADD COLUMN IF NOT EXISTS written_by TEXT;
    ALTER TABLE votes ADD COLUMN IF NOT EXISTS written_by TEXT
    """,
]

# Serializes schema changes between processes starting together.
_SCHEMA_LOCK = 0x61727469  # "arti"


class PgSchema:
    """The schema's migrations, run when the store opens the database."""

    @staticmethod
    def _migrate(db: psycopg.Connection[Any]) -> None:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS articlebot_schema (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM articlebot_schema").fetchone()
            version = row[0] if row else 0
            if version == 0:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
                for statement in statements("postgres"):
                    db.execute(statement)
                _run(db, conversations.SCHEMA + collection_settings.SCHEMA)
                _set_version(db, SCHEMA_VERSION)
            else:
                upgrade(db, version, SCHEMA_VERSION)


def upgrade(db: psycopg.Connection[Any], version: int, to: int) -> None:
    """Run the upgrades from `version` to `to` (tests start from version 0 to build history)."""
    for number, script in enumerate(UPGRADES[version:to], start=version + 1):
        _run(db, script)
        _set_version(db, number)


def _run(db: psycopg.Connection[Any], script: str) -> None:
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def _set_version(db: psycopg.Connection[Any], number: int) -> None:
    db.execute("DELETE FROM articlebot_schema")
    db.execute("INSERT INTO articlebot_schema VALUES (%s)", (number,))
