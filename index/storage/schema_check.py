"""Whether an SQLite file holds exactly the schema this release declares, read before any of its
rows are.

A restored database comes from a backup folder anyone could have written, and SQLite runs what
its schema says: a trigger fires on the bot's next write (one copied every new passage's text
away), a view stands where a table should be (one over an endless recursive query held restore
for ever), a CHECK or an expression index is evaluated by `PRAGMA integrity_check`. So the file's
schema is compared, through SQLite's own PRAGMAs and without running any of it, with a reference
made in memory from the declarations: the article store's tables.py at its current version (or
its upgrade history, for an older version's backup), the bot's databases' own SCHEMA.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from typing import Any

from index.storage import collection_settings, conversations
from index.storage.data_folder import STORE
from index.storage.sqlite_schema import upgrade
from index.storage.tables import SCHEMA_VERSION, statements

__all__ = ["schema_problem"]

# Each of the bot's databases as this release declares it, and as earlier ones did (a file an
# earlier release made, not opened since, is whole: opening it adds what it lacks).
_BOT_SCHEMAS = {
    conversations.FILE_NAME: (conversations.SCHEMA, conversations.FIRST_SCHEMA),
    collection_settings.FILE_NAME: (collection_settings.SCHEMA,),
}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Kept by SQLite itself: AUTOINCREMENT's counters, ANALYZE's statistics (the planner's only).
_INTERNAL = re.compile(r"sqlite_(sequence|stat\d)")
_WITHOUT_ROWID = re.compile(r"\)\s*WITHOUT\s+ROWID\s*$", re.IGNORECASE)

Shape = dict[str, Any]


def schema_problem(db: sqlite3.Connection, name: str, version: int) -> str | None:
    """What in `db` (the data folder's file `name`) differs from the declared schema at
    `version` (the store's; 0 for the bot's databases), or None when nothing does."""
    if name == STORE:
        references = [_store_reference(version, fresh) for fresh in (True, False)]
    else:
        references = [_bot_reference(schema) for schema in _BOT_SCHEMAS[name]]
    found = _shape(db)
    kinds = {kind for kind, _ in found["objects"]}
    if kinds & {"trigger", "view"}:
        what = sorted(n for kind, n in found["objects"] if kind in ("trigger", "view"))[0]
        return f"a trigger or view ({what}) that this release does not declare"
    # A store at the current version was either made fresh or upgraded step by step: each has
    # the same tables, columns and indexes, and SQL worded its own way.
    words = set().union(*(r["words"] for r in references))
    # The bot's databases make what they lack when opened (CREATE ... IF NOT EXISTS), so a file
    # from before a table or index was declared is whole; the store's history is its version.
    for reference in references:
        problem = _difference(found, reference, words, partial=name != STORE)
        if problem is None:
            return None
    return problem


@functools.cache
def _store_reference(version: int, fresh: bool) -> Shape:
    db = sqlite3.connect(":memory:")
    try:
        if fresh and version == SCHEMA_VERSION:
            for statement in statements("sqlite"):
                db.execute(statement)
        else:
            upgrade(db, 0, version)
        return _shape(db)
    finally:
        db.close()


@functools.cache
def _bot_reference(schema: str) -> Shape:
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(schema)
        return _shape(db)
    finally:
        db.close()


def _shape(db: sqlite3.Connection) -> Shape:
    """The schema as SQLite reports it: each object (the indexes SQLite makes for a UNIQUE or a
    PRIMARY KEY among them), each table's kind, columns and foreign keys, each index's columns;
    the words of every statement."""
    rows = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    objects = {(str(t), str(n)) for t, n, _, _ in rows if not _INTERNAL.fullmatch(str(n))}
    tables, indexes, words = {}, {}, set()
    for kind, name, table, sql in rows:
        words |= set(_WORD.findall(str(sql or "").upper()))
        if kind == "table" and not _INTERNAL.fullmatch(str(name)):
            quoted = _quote(name)
            # A virtual table is never asked about: that would load its module.
            plain = str(sql or "").lstrip().upper().startswith("CREATE TABLE")
            tables[name] = (
                plain,
                _WITHOUT_ROWID.search(str(sql or "")) is not None,
                db.execute(f"PRAGMA table_xinfo({quoted})").fetchall() if plain else [],
                db.execute(f"PRAGMA foreign_key_list({quoted})").fetchall() if plain else [],
            )
        elif kind == "index":
            indexes[name] = (table, db.execute(f"PRAGMA index_xinfo({_quote(name)})").fetchall())
    return {"objects": objects, "tables": tables, "indexes": indexes, "words": words}


def _difference(found: Shape, reference: Shape, words: set[str], *, partial: bool) -> str | None:
    extra = sorted(n for _, n in found["objects"] - reference["objects"])
    if extra:
        return f"{extra[0]}, which this release does not declare"
    missing = sorted(n for _, n in reference["objects"] - found["objects"])
    if missing and not partial:
        return f"no {missing[0]}, which this release declares"
    for name, shape in reference["tables"].items():
        if name in found["tables"] and found["tables"][name] != shape:
            return f"the table {name} defined otherwise than this release declares"
    for name, shape in reference["indexes"].items():
        if name in found["indexes"] and found["indexes"][name] != shape:
            return f"the index {name} defined otherwise than this release declares"
    # A CHECK constraint, a DEFAULT or a COLLATE is invisible to the PRAGMAs above, and each is
    # a word the declarations never use.
    strange = sorted(found["words"] - words)
    if strange:
        return f"{strange[0]} in its schema, which this release does not declare"
    return None


def _quote(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'
