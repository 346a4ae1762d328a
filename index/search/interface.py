"""What retrieval reads: a collection's backend (its passages, vectors and keyword index) and
its model (the question's vector, the line its cosines are read on, its fitted judgement).

The narrow interfaces the two backends (search/embedded_backend.py, storage/postgres/) and the
models (embedding/) satisfy; retrieval.py is written against them alone.
"""

from __future__ import annotations

from collections.abc import Collection as Container
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from index.embedding.calibration import Calibration
from index.records import IndexState, Passage
from index.search.ranking import Terms
from index.storage.sentence_rows import Stored

__all__ = ["Backend", "CollectionBackend", "KeywordSide", "QueryModel"]


class KeywordSide(Terms, Protocol):
    """A keyword index over some passages: ranked search, scores of given passages, word weights."""

    def __len__(self) -> int: ...

    def search(self, terms: list[str], k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def scores(self, terms: list[str], ids: list[int]) -> dict[int, float]: ...

    def frequencies(self, terms: list[str]) -> dict[str, int]: ...


class Backend(Protocol):
    """Where a collection's passages, vectors and keyword index live."""

    def dense(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]: ...

    def keywords(self, article_ids: Container[int] | None = None) -> KeywordSide: ...

    def article_passages(self, article_ids: Container[int]) -> list[Passage]: ...

    def leading_passages(self, article_ids: list[int], paragraphs: int) -> list[Passage]: ...

    def passages(self, ids: list[int]) -> dict[int, Passage]: ...

    def sentence_vectors(self, ids: list[int], model: str, dim: int) -> dict[int, Stored]:
        """Each passage's sentence vectors as `model` stored them at add time, for those that
        have them."""
        ...

    def story_words(self, article_id: int, language: str | None) -> tuple[set[str], int]:
        """Every keyword of an article read in `language`, and how many passages it has."""
        ...

    def languages(self) -> dict[str, int]:
        """How many articles of each language the collection holds."""
        ...

    def centre(self) -> np.ndarray | None:
        """The mean of the collection's passage vectors."""
        ...


class CollectionBackend(Backend, Protocol):
    """A collection's backend as the collection keeps it: the reads retrieval makes, and the
    upkeep of its indexes."""

    def changed(self) -> None:
        """Passages were added or removed: bring the indexes in line before the next search."""
        ...

    def empty(self) -> bool: ...

    def state(self) -> IndexState: ...

    def rebuild(self) -> IndexState: ...

    def nbytes(self) -> int:
        """Memory its indexes hold in this process."""
        ...

    def unload(self) -> None:
        """Let go of the indexes in memory; the next search loads them again."""
        ...


class QueryModel(Protocol):
    """What retrieval needs of the collection's model: its query side, and its calibration
    (embedding/calibration.py): the line that puts its cosines on the scale the rules were
    fitted on, how much less relevance a question in another language than the articles' needs
    (its cosines are lower), how to move such a question toward them, how much more relevance a
    question in a language whose texts the model finds alike needs, and its fitted judgement of
    whether a best passage answers (relevance.Judgement), if it has one; and a passage's length
    in its tokens, which the unrelated passages are read by."""

    calibration: Calibration
    name: str
    dim: int

    def encode_query(self, text: str) -> np.ndarray: ...

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray: ...

    def token_counts(self, texts: Sequence[str]) -> list[int]: ...

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray:
        """A few sentences a question waits on, each read up to a bounded length."""
        ...
