"""The article store's tables, declared once for both databases, at the current schema version.

A new database is made from these statements in one step. A database made by an older articlebot
is brought up to date by its own history of upgrades (sqlite_schema.UPGRADES, postgres/schema.py
UPGRADES), kept because files and servers of every earlier version exist;
tests/storage/test_schema.py builds each database both ways and checks they end at the same
columns, constraints and indexes. A change to the schema is a new upgrade in each history and
the same change here, and SCHEMA_VERSION moves by one.

Where the databases differ, the statements say so:
- `{id}`, `{ref}`, `{int64}`, `{bytes}`, `{vector}`: types each spells its own way;
- a line starting `sqlite:` or `postgres:` is that database's alone: PostgreSQL keeps keyword
  postings and the counts that rank them in SQL (SQLite's sit in bm25s files beside it), and
  each has a few columns its history left nullable where the other's is not.

The bot's own tables (conversations.SCHEMA, collection_settings.SCHEMA) are declared in their
modules, in types both databases read alike.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["SCHEMA_VERSION", "Dialect", "statements"]

Dialect = Literal["sqlite", "postgres"]

SCHEMA_VERSION = 9

_TYPES: dict[Dialect, dict[str, str]] = {
    # AUTOINCREMENT: ids are never reused, so (count, max id) tells when an index file is stale.
    "sqlite": {
        "id": "INTEGER PRIMARY KEY AUTOINCREMENT",
        "ref": "INTEGER",
        "int64": "INTEGER",
        "bytes": "BLOB",
        "vector": "BLOB",
    },
    "postgres": {
        "id": "BIGSERIAL PRIMARY KEY",
        "ref": "BIGINT",
        "int64": "BIGINT",
        "bytes": "BYTEA",
        "vector": "vector",
    },
}

_TABLES = """
CREATE TABLE collections (
    name TEXT PRIMARY KEY,
sqlite:    model TEXT NOT NULL,
sqlite:    dim INTEGER NOT NULL,
postgres:  model TEXT,
postgres:  dim INTEGER,
    created_at TEXT NOT NULL,
postgres:  passages BIGINT NOT NULL DEFAULT 0,
postgres:  tokens BIGINT NOT NULL DEFAULT 0,
postgres:  tokenizer INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE articles (
    id {id},
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
sqlite:    number INTEGER,
postgres:  number INTEGER NOT NULL,
    language TEXT,
    UNIQUE (collection, content_hash)
);
CREATE INDEX articles_url ON articles(collection, url);
CREATE INDEX articles_number ON articles(collection, number);
CREATE TABLE passages (
    id {id},
    article_id {ref} NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    collection TEXT NOT NULL,
    paragraph INTEGER NOT NULL,
    piece INTEGER NOT NULL,
    text TEXT NOT NULL,
postgres:  length INTEGER NOT NULL,
    embedding {vector} NOT NULL,
    heading TEXT
);
CREATE INDEX passages_collection ON passages(collection, id);
CREATE INDEX passages_article ON passages(article_id);
postgres: CREATE TABLE postings (
postgres:     collection TEXT NOT NULL,
postgres:     term TEXT NOT NULL,
postgres:     passage_id BIGINT NOT NULL REFERENCES passages(id) ON DELETE CASCADE,
postgres:     tf INTEGER NOT NULL,
postgres:     length INTEGER NOT NULL,
postgres:     PRIMARY KEY (collection, term, passage_id)
postgres: );
postgres: CREATE INDEX postings_passage ON postings(passage_id);
CREATE TABLE staged_embeddings (
    passage_id {ref} PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
    collection TEXT NOT NULL,
    model TEXT NOT NULL,
    dim INTEGER NOT NULL,
    embedding {vector} NOT NULL
);
CREATE INDEX staged_collection ON staged_embeddings(collection, model, dim);
CREATE TABLE sentence_vectors (
    passage_id {ref} PRIMARY KEY REFERENCES passages(id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    split {int64} NOT NULL,
    vectors {bytes} NOT NULL
);
CREATE TABLE feeds (
    id {id},
    collection TEXT NOT NULL,
    url TEXT NOT NULL,
    title TEXT,
    added_by TEXT,
    added_at TEXT NOT NULL,
    checked_at TEXT,
    UNIQUE (collection, url)
);
CREATE TABLE feed_entries (
    feed_id {ref} NOT NULL REFERENCES feeds(id) ON DELETE CASCADE,
    entry TEXT NOT NULL,
    seen_at TEXT NOT NULL,
    PRIMARY KEY (feed_id, entry)
);
CREATE TABLE article_signatures (
    article_id {ref} PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    collection TEXT NOT NULL,
    signature {bytes} NOT NULL
);
CREATE TABLE signature_bands (
    collection TEXT NOT NULL,
    band INTEGER NOT NULL,
    bucket {int64} NOT NULL,
    article_id {ref} NOT NULL REFERENCES articles(id) ON DELETE CASCADE,
    PRIMARY KEY (collection, band, bucket, article_id)
sqlite: ) WITHOUT ROWID;
postgres: );
CREATE INDEX signature_bands_article ON signature_bands(article_id);
CREATE TABLE summaries (
    article_id {ref} PRIMARY KEY REFERENCES articles(id) ON DELETE CASCADE,
    collection TEXT NOT NULL,
    sentences TEXT NOT NULL
);
"""

_ONLY = re.compile(r"^(sqlite|postgres):\s?(.*)$")


def statements(dialect: Dialect) -> list[str]:
    """The statements that make the article store's tables in a new database of `dialect`."""
    lines = []
    for line in _TABLES.splitlines():
        only = _ONLY.match(line)
        if only is None:
            lines.append(line)
        elif only.group(1) == dialect:
            lines.append(only.group(2))
    text = "\n".join(lines).format(**_TYPES[dialect])
    text = re.sub(r",(\s*\))", r"\1", text)  # a column list whose last lines were the other's
    return [s.strip() for s in text.split(";") if s.strip()]
