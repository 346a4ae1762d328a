"""What each collection's admins chose (in Discord: a server's `/settings`), in `settings.db`
in the data folder.

Plain named values (JSON) per collection; the program that reads them gives their meaning and
their defaults. A name never set reads as absent, so a default from the environment still
applies; a name set to null is a choice ("no role needed"), not an absence.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

__all__ = ["CollectionSettings"]

FILE_NAME = "settings.db"


class CollectionSettings:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Shared by the event loop and worker threads, one statement at a time.
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.Lock()
        with self._lock:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS settings (collection TEXT NOT NULL, name TEXT NOT "
                "NULL, value TEXT NOT NULL, PRIMARY KEY (collection, name))"
            )

    @classmethod
    def in_folder(cls, data_dir: Path) -> CollectionSettings:
        return cls(Path(data_dir) / FILE_NAME)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get(self, collection: str) -> dict[str, Any]:
        """The values this collection has set, by name."""
        with self._lock:
            rows = self._db.execute(
                "SELECT name, value FROM settings WHERE collection = ?", (collection,)
            ).fetchall()
        return {name: json.loads(value) for name, value in rows}

    def set(self, collection: str, name: str, value: Any) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT OR REPLACE INTO settings VALUES (?, ?, ?)",
                (collection, name, json.dumps(value)),
            )
