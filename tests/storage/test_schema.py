"""Both databases stand at one schema version, with the same indexes on the tables they share."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg

from index.storage.collection_settings import CollectionSettings
from index.storage.conversations import Conversations
from index.storage.postgres import PgStore
from index.storage.postgres.schema import _SCHEMA as POSTGRES_SCHEMA
from index.storage.sqlite_schema import SCHEMA as SQLITE_SCHEMA
from index.storage.sqlite_store import Store

# What only PostgreSQL has: keyword postings in SQL, and HNSW indexes per vector size.
ONLY_POSTGRES = ("postings_", "passages_hnsw_")


def _sqlite_indexes(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    return {r[0] for r in rows}


def test_one_schema_version_and_the_same_indexes_on_both_databases(
    tmp_path: Path, database_url: str
) -> None:
    assert len(SQLITE_SCHEMA) == len(POSTGRES_SCHEMA)
    Store(tmp_path / "articlebot.db").close()
    Conversations.in_folder(tmp_path).close()
    CollectionSettings.in_folder(tmp_path).close()
    sqlite = set().union(*(_sqlite_indexes(f) for f in tmp_path.glob("*.db")))
    PgStore(database_url, 16).close()
    with psycopg.connect(database_url) as db:
        rows = db.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = 'public' "
            "AND indexname NOT LIKE '%_pkey' AND indexname NOT LIKE '%_key'"
        ).fetchall()
        (version,) = db.execute("SELECT version FROM articlebot_schema").fetchone() or (0,)
    postgres = {r[0] for r in rows if not r[0].startswith(ONLY_POSTGRES)}
    assert sqlite == postgres
    assert version == len(POSTGRES_SCHEMA)
    with sqlite3.connect(tmp_path / "articlebot.db") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (len(SQLITE_SCHEMA),)
