"""What both retrieval backends read the same way from their store: passages and story words."""

from __future__ import annotations

from collections.abc import Collection as Container
from typing import Any

import numpy as np

from index.ingest.analysis import analyze
from index.records import Passage
from index.storage.interface import ArticleStore

__all__ = ["CENTRE_SAMPLE", "PassageReads"]

# The centre of a collection is the mean of at most this many of its passage vectors, taken
# evenly by id: bounded work at any size, and within a fraction of a per cent of the mean of all.
CENTRE_SAMPLE = 4_096


class PassageReads:
    """Reads of one collection's passages, through whichever store holds them."""

    store: ArticleStore
    collection: str
    _centre: tuple[Any, np.ndarray | None] | None = None  # (the key it was made at, centre)

    def _centre_key(self) -> Any:
        """What changes when passages come or go, cheaply read."""
        raise NotImplementedError

    def centre(self) -> np.ndarray | None:
        """The mean of the collection's passage vectors (None while it has none), made again
        only once passages came or went."""
        key = self._centre_key()
        cached = self._centre
        if cached is not None and cached[0] == key:
            return cached[1]
        centre = None
        model = self.store.collection_model(self.collection)
        ids = self.store.passage_ids(self.collection) if model else np.zeros(0, dtype=np.int64)
        if model and len(ids):
            sample = ids[:: -(-len(ids) // CENTRE_SAMPLE)].tolist()
            total, count = np.zeros(model[1], dtype=np.float64), 0
            for _, vectors in self.store.iter_embeddings(self.collection, model[1], ids=sample):
                total += vectors.sum(0)
                count += len(vectors)
            centre = (total / max(count, 1)).astype(np.float32)
        self._centre = (key, centre)
        return centre

    def article_passages(self, article_ids: Container[int]) -> list[Passage]:
        return [p for aid in article_ids for p in self.store.passages(self.collection, aid)]

    def leading_passages(self, article_ids: list[int], paragraphs: int) -> list[Passage]:
        return self.store.leading_passages(self.collection, article_ids, paragraphs)

    def passages(self, ids: list[int]) -> dict[int, Passage]:
        return self.store.passages_by_id(ids)

    def languages(self) -> dict[str, int]:
        return self.store.collection_languages(self.collection)

    def story_words(self, article_id: int, language: str | None) -> set[str]:
        """Every keyword of an article, its title's and its passages', read in `language`
        (the question's analysis, so that the two compare)."""
        article = self.store.get_article(self.collection, article_id)
        words = set(analyze(article.title, language)) if article else set()
        for passage in self.store.passages(self.collection, article_id):
            words.update(analyze(passage.text, language))
        return words
