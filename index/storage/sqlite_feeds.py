"""The SQLite store's news feeds: the feeds each collection follows, and the entries already
taken (or given up on) from each, so that checking a feed again brings only what is new. Rows
become `Feed` records here, for both stores (storage/postgres/ reads its rows with `feed_from_row`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from index.records import Feed
from index.storage.sqlite_file import SqliteFile, locked, timestamp

__all__ = ["FeedTables", "feed_from_row"]


class FeedTables(SqliteFile):
    """The feeds each collection follows, and the entries seen in each."""

    # feeds

    @locked
    def add_feed(
        self, collection: str, url: str, title: str | None, added_by: str | None
    ) -> tuple[Feed, bool]:
        """The feed, stored once per collection; False when it was already followed."""
        with self._write():
            found = self._db.execute(
                "SELECT * FROM feeds WHERE collection = ? AND url = ?", (collection, url)
            ).fetchone()
            if found:
                return feed_from_row(found), False
            cursor = self._db.execute(
                "INSERT INTO feeds (collection, url, title, added_by, added_at) VALUES (?,?,?,?,?)",
                (collection, url, title, added_by, timestamp()),
            )
            row = self._db.execute("SELECT * FROM feeds WHERE id = ?", (cursor.lastrowid,))
            return feed_from_row(row.fetchone()), True

    @locked
    def feed_collections(self) -> list[str]:
        """The collections that follow at least one feed."""
        rows = self._db.execute("SELECT DISTINCT collection FROM feeds ORDER BY collection")
        return [r[0] for r in rows]

    @locked
    def list_feeds(self, collection: str) -> list[Feed]:
        rows = self._db.execute(
            "SELECT * FROM feeds WHERE collection = ? ORDER BY id", (collection,)
        ).fetchall()
        return [feed_from_row(r) for r in rows]

    @locked
    def delete_feed(self, collection: str, feed_id: int) -> Feed | None:
        with self._write():
            row = self._db.execute(
                "SELECT * FROM feeds WHERE collection = ? AND id = ?", (collection, feed_id)
            ).fetchone()
            if row:
                self._db.execute("DELETE FROM feeds WHERE id = ?", (feed_id,))
            return feed_from_row(row) if row else None

    @locked
    def seen_entries(self, feed_id: int) -> set[str]:
        rows = self._db.execute("SELECT entry FROM feed_entries WHERE feed_id = ?", (feed_id,))
        return {r[0] for r in rows}

    @locked
    def mark_seen(self, feed_id: int, entries: list[str]) -> None:
        """Record entries as taken (or given up on), and the feed as checked now."""
        now = timestamp()
        with self._write():
            # A feed removed meanwhile has nothing to record.
            if not self._db.execute("SELECT 1 FROM feeds WHERE id = ?", (feed_id,)).fetchone():
                return
            self._db.executemany(
                "INSERT OR IGNORE INTO feed_entries (feed_id, entry, seen_at) VALUES (?,?,?)",
                [(feed_id, entry, now) for entry in entries],
            )
            self._db.execute("UPDATE feeds SET checked_at = ? WHERE id = ?", (now, feed_id))


def feed_from_row(row: Mapping[str, Any]) -> Feed:
    return Feed(
        id=row["id"],
        collection=row["collection"],
        url=row["url"],
        title=row["title"],
        added_by=row["added_by"],
        added_at=row["added_at"],
        checked_at=row["checked_at"],
    )
