"""What both retrieval backends read the same way from their store: passages and story words."""

from __future__ import annotations

from collections.abc import Collection as Container

import numpy as np

from index.records import Passage
from index.storage.interface import ArticleStore
from index.storage.sentence_rows import Stored
from index.text import analyze

__all__ = ["CENTRE_DRIFT", "CENTRE_SAMPLE", "PassageReads"]

# The centre of a collection is the mean of at most this many of its passage vectors, taken
# evenly by id: bounded work at any size, and within a fraction of a per cent of the mean of all.
CENTRE_SAMPLE = 4_096
# The centre is made again once the passages have grown or shrunk by this share (or the model
# changed): a collection that takes articles all day does not read its vectors at every question,
# and a few per cent more passages move its mean by less than that.
CENTRE_DRIFT = 0.05


class PassageReads:
    """Reads of one collection's passages, through whichever store holds them."""

    store: ArticleStore
    collection: str
    # (model, passages) when it was made, and the centre
    _centre: tuple[tuple[str, int] | None, int, np.ndarray | None] | None = None

    def _passage_count(self) -> int:
        """How many passages the collection holds, cheaply read."""
        raise NotImplementedError

    def centre(self) -> np.ndarray | None:
        """The mean of the collection's passage vectors (None while it has none), made again
        once the model changed or the passages grew or shrank by `CENTRE_DRIFT`."""
        model = self.store.collection_model(self.collection)
        count = self._passage_count()
        cached = self._centre
        if (
            cached is not None
            and cached[0] == model
            and abs(count - cached[1]) <= CENTRE_DRIFT * cached[1]
            and (cached[2] is not None or count == 0)
        ):
            return cached[2]
        centre = None
        ids = self.store.passage_ids(self.collection) if model else np.zeros(0, dtype=np.int64)
        if model and len(ids):
            sample = ids[:: -(-len(ids) // CENTRE_SAMPLE)].tolist()
            total, found = np.zeros(model[1], dtype=np.float64), 0
            for _, vectors in self.store.iter_embeddings(self.collection, model[1], ids=sample):
                total += vectors.sum(0)
                found += len(vectors)
            centre = (total / found).astype(np.float32) if found else None
        self._centre = (model, len(ids), centre)
        return centre

    def article_passages(self, article_ids: Container[int]) -> list[Passage]:
        return [p for aid in article_ids for p in self.store.passages(self.collection, aid)]

    def leading_passages(self, article_ids: list[int], paragraphs: int) -> list[Passage]:
        return self.store.leading_passages(self.collection, article_ids, paragraphs)

    def passages(self, ids: list[int]) -> dict[int, Passage]:
        return self.store.passages_by_id(ids)

    def sentence_vectors(self, ids: list[int], model: str, dim: int) -> dict[int, Stored]:
        """The stored sentence vectors of these passages that `model` made."""
        return self.store.sentence_vectors(ids, model, dim)

    def languages(self) -> dict[str, int]:
        return self.store.collection_languages(self.collection)

    def story_words(self, article_id: int, language: str | None) -> tuple[set[str], int]:
        """Every keyword of an article, its title's and its passages', read in `language`
        (the question's analysis, so that the two compare), and how many passages it has."""
        article = self.store.get_article(self.collection, article_id)
        words = set(analyze(article.title, language)) if article else set()
        passages = self.store.passages(self.collection, article_id)
        for passage in passages:
            words.update(analyze(passage.text, language))
        return words, len(passages)
