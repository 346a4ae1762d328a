"""Reading passages: a collection's, an article's, the first paragraphs of some articles, given
ids, their vectors in batches, and the counts that tell a collection's size and whether it
changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from index.records import Passage
from index.storage.postgres.connection import PgConnection

__all__ = ["PgPassages"]


class PgPassages(PgConnection):
    """The store's passages, as searches, answers and upkeep read them."""

    # passages

    _PASSAGE = "SELECT id, article_id, paragraph, piece, text FROM passages "

    def _passages(self, sql: str, args: tuple[Any, ...]) -> list[Passage]:
        with self._conn() as db:
            rows = db.execute(self._PASSAGE + sql, args).fetchall()
        return [Passage(*r) for r in rows]

    def passages(self, collection: str, article_id: int | None = None) -> list[Passage]:
        if article_id is None:
            return self._passages("WHERE collection = %s ORDER BY id", (collection,))
        return self._passages(
            "WHERE collection = %s AND article_id = %s ORDER BY id", (collection, article_id)
        )

    def article_passages(self, collection: str, article_id: int) -> list[Passage]:
        """An article's passages in order, with the subheading each stands under."""
        with self._conn() as db:
            rows = db.execute(
                "SELECT id, article_id, paragraph, piece, text, heading FROM passages "
                "WHERE collection = %s AND article_id = %s ORDER BY id",
                (collection, article_id),
            ).fetchall()
        return [Passage(*r) for r in rows]

    def leading_passages(
        self, collection: str, article_ids: list[int], paragraphs: int
    ) -> list[Passage]:
        if not article_ids:
            return []
        return self._passages(
            "WHERE collection = %s AND article_id = ANY(%s) AND paragraph <= %s ORDER BY id",
            (collection, list(article_ids), paragraphs),
        )

    def passages_by_id(self, ids: list[int]) -> dict[int, Passage]:
        found = self._passages("WHERE id = ANY(%s)", ([int(i) for i in ids],))
        return {p.id: p for p in found}

    def passage_ids(self, collection: str) -> np.ndarray:
        with self._conn() as db:
            rows = db.execute(
                "SELECT id FROM passages WHERE collection = %s ORDER BY id", (collection,)
            ).fetchall()
        return np.array([r[0] for r in rows], dtype=np.int64)

    def signature(self, collection: str) -> tuple[int, int]:
        with self._conn() as db:
            row = db.execute(
                "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM passages WHERE collection = %s",
                (collection,),
            ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def count(self, collection: str) -> tuple[int, int]:
        with self._conn() as db:
            # The passages are counted by every write: COUNT(*) would scan a large collection.
            row = db.execute(
                "SELECT (SELECT COUNT(*) FROM articles WHERE collection = %s), "
                "COALESCE((SELECT passages FROM collections WHERE name = %s), 0)",
                (collection, collection),
            ).fetchone()
        assert row is not None
        return int(row[0]), int(row[1])

    def iter_embeddings(
        self, collection: str, dim: int, ids: list[int] | None = None, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        last = -1
        while True:
            with self._conn() as db:
                if ids is not None:
                    rows = db.execute(
                        "SELECT id, embedding FROM passages WHERE id = ANY(%s) ORDER BY id",
                        ([int(i) for i in ids],),
                    ).fetchall()
                else:
                    rows = db.execute(
                        "SELECT id, embedding FROM passages WHERE collection = %s AND id > %s "
                        "ORDER BY id LIMIT %s",
                        (collection, last, batch),
                    ).fetchall()
            if not rows:
                return
            yield (
                np.array([r[0] for r in rows], dtype=np.int64),
                np.vstack([_array(r[1]) for r in rows]).reshape(-1, dim),
            )
            if ids is not None:
                return
            last = rows[-1][0]


def _array(vector: Any) -> np.ndarray:
    """A stored vector as float32: pgvector's loader gives a `Vector` (0.4 on) or an array."""
    to_numpy = getattr(vector, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else vector, dtype=np.float32)
