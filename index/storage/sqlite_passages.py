"""The SQLite store's passages and their vectors: which model embedded a collection, the
passages read by article, by id or in order, the collection's signature and counts, vectors read
back in batches to rebuild an index, and a re-embedding's vectors staged beside the old ones until
they are swapped in, all at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import numpy as np

from index.records import Passage
from index.storage import sentence_rows
from index.storage.sentence_rows import SentenceRows, Stored
from index.storage.sqlite_file import SqliteFile, locked, timestamp

__all__ = ["PassageTables"]


class PassageTables(SqliteFile):
    """Passages, their vectors and the model that made them, per collection."""

    # the model that embedded each collection

    @locked
    def collection_model(self, collection: str) -> tuple[str, int] | None:
        row = self._db.execute(
            "SELECT model, dim FROM collections WHERE name = ?", (collection,)
        ).fetchone()
        return (row["model"], row["dim"]) if row else None

    @locked
    def set_collection_model(self, collection: str, model: str, dim: int) -> None:
        self._db.execute(
            "INSERT INTO collections (name, model, dim, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(name) DO UPDATE SET model = excluded.model, dim = excluded.dim",
            (collection, model, dim, timestamp()),
        )

    # passages

    @locked
    def passages(self, collection: str, article_id: int | None = None) -> list[Passage]:
        sql = "SELECT id, article_id, paragraph, piece, text FROM passages WHERE collection = ?"
        args: tuple[object, ...] = (collection,)
        if article_id is not None:
            sql += " AND article_id = ?"
            args += (article_id,)
        rows = self._db.execute(sql + " ORDER BY id", args).fetchall()
        return [Passage(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    @locked
    def article_passages(self, collection: str, article_id: int) -> list[Passage]:
        """An article's passages in order, with the subheading each stands under."""
        rows = self._db.execute(
            "SELECT id, article_id, paragraph, piece, text, heading FROM passages "
            "WHERE collection = ? AND article_id = ? ORDER BY id",
            (collection, article_id),
        ).fetchall()
        return [Passage(*r) for r in rows]

    @locked
    def leading_passages(
        self, collection: str, article_ids: list[int], paragraphs: int
    ) -> list[Passage]:
        """The passages of each article's first `paragraphs` paragraphs."""
        if not article_ids:
            return []
        marks = ",".join("?" * len(article_ids))
        rows = self._db.execute(
            "SELECT id, article_id, paragraph, piece, text FROM passages WHERE collection = ? "
            f"AND article_id IN ({marks}) AND paragraph <= ? ORDER BY id",
            (collection, *article_ids, paragraphs),
        ).fetchall()
        return [Passage(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    @locked
    def passages_by_id(self, ids: list[int]) -> dict[int, Passage]:
        out: dict[int, Passage] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for r in self._db.execute(
                "SELECT id, article_id, paragraph, piece, text FROM passages "
                f"WHERE id IN ({marks})",
                chunk,
            ):
                out[r[0]] = Passage(r[0], r[1], r[2], r[3], r[4])
        return out

    @locked
    def passage_ids(self, collection: str) -> np.ndarray:
        rows = self._db.execute(
            "SELECT id FROM passages WHERE collection = ? ORDER BY id", (collection,)
        ).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    @locked
    def signature(self, collection: str) -> tuple[int, int]:
        """(passage count, highest passage id): changes whenever passages are added or removed."""
        row = self._db.execute(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM passages WHERE collection = ?",
            (collection,),
        ).fetchone()
        return int(row[0]), int(row[1])

    @locked
    def data_version(self) -> int:
        """Changes whenever another connection commits (SQLite's PRAGMA data_version): checked
        in microseconds, where `signature` counts passages (0.4 s at a million)."""
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    @locked
    def count(self, collection: str) -> tuple[int, int]:
        articles = self._db.execute(
            "SELECT COUNT(*) FROM articles WHERE collection = ?", (collection,)
        ).fetchone()[0]
        passages = self._db.execute(
            "SELECT COUNT(*) FROM passages WHERE collection = ?", (collection,)
        ).fetchone()[0]
        return int(articles), int(passages)

    def iter_embeddings(
        self, collection: str, dim: int, ids: list[int] | None = None, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield (ids, vectors) in batches, for rebuilding the index without re-embedding."""
        if ids is not None:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ",".join("?" * len(chunk))
                with self._lock:
                    rows = self._db.execute(
                        f"SELECT id, embedding FROM passages WHERE id IN ({marks})", chunk
                    ).fetchall()
                yield _to_arrays(rows, dim)
            return
        last = -1
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT id, embedding FROM passages WHERE collection = ? AND id > ? "
                    "ORDER BY id LIMIT ?",
                    (collection, last, batch),
                ).fetchall()
            if not rows:
                return
            last = rows[-1][0]
            yield _to_arrays(rows, dim)

    # re-embedding: new vectors are staged beside the old ones and swapped in all at once, so
    # a collection never mixes two models' vectors, and a killed re-embedding resumes.

    @locked
    def unstaged_passages(self, collection: str, model: str, dim: int) -> list[Passage]:
        """The passages that still need a vector from `model`; stale staging is dropped."""
        with self._write():
            self._db.execute(
                "DELETE FROM staged_embeddings WHERE collection = ? AND (model != ? OR dim != ?)",
                (collection, model, dim),
            )
        rows = self._db.execute(
            "SELECT id, article_id, paragraph, piece, text FROM passages p WHERE collection = ? "
            "AND NOT EXISTS (SELECT 1 FROM staged_embeddings s WHERE s.passage_id = p.id) "
            "ORDER BY id",
            (collection,),
        ).fetchall()
        return [Passage(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    @locked
    def sentence_vectors(self, ids: list[int], model: str, dim: int) -> dict[int, Stored]:
        return sentence_rows.read(self._db, "?", ids, model, dim)

    @locked
    def stage_embeddings(
        self,
        collection: str,
        model: str,
        ids: np.ndarray,
        vectors: np.ndarray,
        sentences: SentenceRows | None = None,
    ) -> None:
        dim = int(vectors.shape[1])
        with self._write():
            if sentences is not None:  # over the old model's: read only once swapped in
                sentence_rows.write(self._db, "?", [int(i) for i in ids], sentences)
            # INSERT ... SELECT: a passage removed meanwhile is skipped, not an error.
            self._db.executemany(
                "INSERT OR REPLACE INTO staged_embeddings "
                "SELECT id, ?, ?, ?, ? FROM passages WHERE id = ?",
                [
                    (collection, model, dim, vectors[i].astype(np.float32).tobytes(), int(pid))
                    for i, pid in enumerate(ids)
                ],
            )

    @locked
    def swap_staged(self, collection: str, model: str, dim: int) -> bool:
        """Swap every staged vector in with the model's name, in one transaction; False (and
        nothing changed) while some passage, added meanwhile, still has none."""
        with self._write():
            missing = self._db.execute(
                "SELECT 1 FROM passages p WHERE collection = ? AND NOT EXISTS "
                "(SELECT 1 FROM staged_embeddings s WHERE s.passage_id = p.id "
                "AND s.model = ? AND s.dim = ?) LIMIT 1",
                (collection, model, dim),
            ).fetchone()
            if missing:
                return False
            self._db.execute(
                "UPDATE passages SET embedding = (SELECT embedding FROM staged_embeddings s "
                "WHERE s.passage_id = passages.id) WHERE collection = ?",
                (collection,),
            )
            self._db.execute("DELETE FROM staged_embeddings WHERE collection = ?", (collection,))
            self.set_collection_model(collection, model, dim)
            return True


def _to_arrays(rows: list[sqlite3.Row], dim: int) -> tuple[np.ndarray, np.ndarray]:
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim)
    return ids, vectors
