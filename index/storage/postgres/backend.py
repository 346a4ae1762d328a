"""One collection's retrieval over PostgreSQL, the backend that search/retrieval.py asks: dense
search exact or through the HNSW index by the collection's size, keyword search over its
postings, and no index held in memory, so that every process sees every other's writes."""

from __future__ import annotations

from collections.abc import Collection as Container

import numpy as np

from index.records import IndexState
from index.storage.passage_reads import PassageReads
from index.storage.postgres.keywords import PgKeywords
from index.storage.postgres.store import PgStore
from index.storage.postgres.vectors import EXACT_LIMIT

__all__ = ["PgBackend"]


class PgBackend(PassageReads):
    """One collection's retrieval over PostgreSQL: nothing held in memory between questions,
    so every process sees every other's writes at once."""

    def __init__(self, store: PgStore, collection: str) -> None:
        self.store: PgStore = store
        self.collection = collection
        self._postings_checked = False

    def _dim(self) -> int | None:
        model = self.store.collection_model(self.collection)
        return model[1] if model else None

    def dense(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        dim = self._dim()
        total = self.store.keyword_totals(self.collection)[0]
        if dim is None or total == 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        found = self.store.nearest(self.collection, query, k, dim, approximate=total > EXACT_LIMIT)
        return (
            np.array([s for _, s in found], dtype=np.float32),
            np.array([pid for pid, _ in found], dtype=np.int64),
        )

    def cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        return self.store.cosines(query, ids)

    def _passage_count(self) -> int:
        return self.store.keyword_totals(self.collection)[0]  # kept by every write

    def keywords(self, article_ids: Container[int] | None = None) -> PgKeywords:
        # Postings are derived data, like the embedded store's saved keyword index: words that
        # an older tokenizer wrote would never match a question's. Checked at the first keyword
        # search, which runs off the bot's event loop, not when the collection is opened.
        if not self._postings_checked:
            self.store.refresh_postings(self.collection)
            self._postings_checked = True
        if article_ids is None:
            return PgKeywords(self.store, self.collection)
        ids = [p.id for p in self.article_passages(article_ids)]
        return PgKeywords(self.store, self.collection, ids)

    # upkeep: PostgreSQL keeps its indexes current with every transaction

    def changed(self) -> None:
        pass

    def nbytes(self) -> int:
        return 0

    def unload(self) -> None:
        pass

    def empty(self) -> bool:
        """Whether nothing is searchable yet: one query, where `state` takes three."""
        return self.store.keyword_totals(self.collection)[0] == 0

    def state(self) -> IndexState:
        total = self.store.keyword_totals(self.collection)[0]
        dim = self._dim()
        if dim is None or total == 0:
            return IndexState(0, "none", 0)
        if total > EXACT_LIMIT:
            return IndexState(
                total, "hnsw", self.store.vector_index_bytes(dim), self.store.approximate_search
            )
        return IndexState(total, "flat", self.store.vector_index_bytes(dim))

    def rebuild(self) -> IndexState:
        """Derive the keyword postings again from the passages (the vectors need no rebuild)."""
        self.store.rebuild_postings(self.collection)
        return self.state()
