"""Both databases stand at one schema version, with the same indexes on the tables they share, and
each database's history of upgrades ends at exactly the tables their one declaration makes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
from postgres_server import PostgresServer

from index.storage import sqlite_schema
from index.storage.collection_settings import CollectionSettings
from index.storage.conversations import Conversations
from index.storage.postgres import PgStore
from index.storage.postgres import schema as postgres_schema
from index.storage.postgres.schema import UPGRADES as POSTGRES_UPGRADES
from index.storage.sqlite_schema import UPGRADES as SQLITE_UPGRADES
from index.storage.sqlite_store import Store
from index.storage.tables import SCHEMA_VERSION

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
    assert len(SQLITE_UPGRADES) == len(POSTGRES_UPGRADES) == SCHEMA_VERSION
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
    assert version == SCHEMA_VERSION
    with sqlite3.connect(tmp_path / "articlebot.db") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def _sqlite_shape(path: Path) -> set[tuple[object, ...]]:
    """Every column, key, foreign key and index of a SQLite file, as PRAGMAs report them."""
    shape: set[tuple[object, ...]] = set()
    with sqlite3.connect(path) as db:
        tables = db.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
        for table, sql in tables:
            shape.add(("table", table, "WITHOUT ROWID" in sql.upper()))
            for column in db.execute(f"PRAGMA table_xinfo({table})"):
                shape.add(("column", table, *column[1:]))
            for key in db.execute(f"PRAGMA foreign_key_list({table})"):
                shape.add(("foreign key", table, *key[2:]))
            for index in db.execute(f"PRAGMA index_list({table})"):
                columns = [c[2] for c in db.execute(f"PRAGMA index_info({index[1]})")]
                shape.add(("index", table, index[1], index[2], index[3], *columns))
    return shape


def test_a_new_sqlite_file_and_one_upgraded_from_version_1_have_the_same_tables(
    tmp_path: Path,
) -> None:
    Store(tmp_path / "new.db").close()  # made from the declaration (tables.py)
    with sqlite3.connect(tmp_path / "old.db", isolation_level=None) as db:
        sqlite_schema.upgrade(db, 0, 1)  # the file articlebot's first schema made
    Store(tmp_path / "old.db").close()  # brought up to date by the upgrades
    new, old = _sqlite_shape(tmp_path / "new.db"), _sqlite_shape(tmp_path / "old.db")
    assert new == old
    assert ("table", "signature_bands", True) in new  # the check sees what it compares
    for path in ("new.db", "old.db"):
        with sqlite3.connect(tmp_path / path) as db:
            assert db.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)


def _postgres_shape(url: str) -> set[tuple[object, ...]]:
    """Every column, constraint and index of a PostgreSQL database's public schema."""
    with psycopg.connect(url) as db:
        columns = db.execute(
            "SELECT 'column', table_name, column_name, data_type, is_nullable, column_default "
            "FROM information_schema.columns WHERE table_schema = 'public'"
        ).fetchall()
        constraints = db.execute(
            "SELECT 'constraint', conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
            "FROM pg_constraint WHERE connamespace = 'public'::regnamespace"
        ).fetchall()
        indexes = db.execute(
            "SELECT 'index', tablename, indexname, indexdef FROM pg_indexes "
            "WHERE schemaname = 'public'"
        ).fetchall()
    return {tuple(row) for row in [*columns, *constraints, *indexes]}


def test_a_new_postgres_database_and_one_upgraded_from_version_1_have_the_same_tables(
    postgres: PostgresServer,
) -> None:
    new, old = postgres.new_database(), postgres.new_database()
    PgStore(new, 16).close()  # made from the declarations
    with psycopg.connect(old) as db, db.transaction():
        db.execute("CREATE TABLE articlebot_schema (version INTEGER NOT NULL)")
        postgres_schema.upgrade(db, 0, 1)  # the database articlebot's first schema made
    PgStore(old, 16).close()  # brought up to date by the upgrades
    new_shape, old_shape = _postgres_shape(new), _postgres_shape(old)
    assert new_shape == old_shape
    assert any(row[:3] == ("column", "turns", "answer_id") for row in new_shape)
