"""What each collection's admins chose (in Discord: a server's `/settings`), in `settings.db`
in the data folder (or the library's PostgreSQL database, see sql.py).

Plain named values (JSON) per collection; the program that reads them gives their meaning and
their defaults. A name never set reads as absent, so a default from the environment still
applies; a name set to null is a choice ("no role needed"), not an absence.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from index.storage.data_folder import SETTINGS
from index.storage.sql import Database, SqliteDatabase

__all__ = ["CollectionSettings"]

FILE_NAME = SETTINGS

# The one declaration of the table, for the settings file and PostgreSQL alike (version 3 there).
SCHEMA = """
CREATE TABLE IF NOT EXISTS settings (
    collection TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (collection, name)
);
"""


class CollectionSettings:
    def __init__(self, db: Database) -> None:
        self._db = db

    @classmethod
    def in_folder(cls, data_dir: Path) -> CollectionSettings:
        return cls(SqliteDatabase(Path(data_dir) / FILE_NAME, SCHEMA))

    def close(self) -> None:
        self._db.close()

    def get(self, collection: str) -> dict[str, Any]:
        """The values this collection has set, by name."""
        with self._db.transaction() as db:
            rows = db.execute(
                "SELECT name, value FROM settings WHERE collection = ?", (collection,)
            )
        return {name: json.loads(value) for name, value in rows}

    def claim(self, collection: str, name: str, value: str) -> bool:
        """Set `name` to `value` where it holds nothing or an earlier value (in text order):
        whether this call set it. Of several processes claiming the same value (a scheduled
        digest's period), one gets it; a period before the one taken is never taken again."""
        with self._db.transaction() as db:
            taken = db.execute(
                "INSERT INTO settings VALUES (?, ?, ?) "
                "ON CONFLICT (collection, name) DO UPDATE SET value = excluded.value "
                "WHERE settings.value < excluded.value RETURNING name",
                (collection, name, json.dumps(value)),
            )
        return bool(taken)

    def set(self, collection: str, name: str, value: Any) -> None:
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO settings VALUES (?, ?, ?) "
                "ON CONFLICT (collection, name) DO UPDATE SET value = excluded.value",
                (collection, name, json.dumps(value)),
            )
