"""The store interface: what the rest of the core may ask of wherever articles are kept.

Two stores satisfy it, checked by mypy where the library chooses one (library.py): the SQLite
file of the data folder (sqlite_store.py) and PostgreSQL with pgvector (storage/postgres/). Nothing
outside that wiring asks which one it got; what only one of them can do (PostgreSQL's keyword
and vector search in SQL) is reached through its retrieval backend, not through this.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol

import numpy as np

from index.ingest.near_duplicates import Fingerprint
from index.records import Article, Document, Feed, Passage, SummarySentence
from index.storage.sentence_rows import SentenceRows, Stored

__all__ = ["ArticleStore"]


class ArticleStore(Protocol):
    """Articles, their passages and vectors, and followed feeds, per collection."""

    def close(self) -> None: ...

    # collections and the model that embedded them

    def collection_names(self) -> list[str]:
        """Every collection that holds an article or follows a feed."""
        ...

    def ping(self) -> None:
        """Read one row, raising StorageError when the store does not answer (health checks)."""
        ...

    def collection_model(self, collection: str) -> tuple[str, int] | None: ...

    def set_collection_model(self, collection: str, model: str, dim: int) -> None: ...

    def count(self, collection: str) -> tuple[int, int]:
        """(articles, passages)."""
        ...

    def signature(self, collection: str) -> tuple[int, int]:
        """(passage count, highest passage id): changes whenever passages come or go."""
        ...

    # articles

    def insert_article(
        self,
        collection: str,
        doc: Document,
        content_hash: str,
        passages: list[tuple[int, int, str]],
        embeddings: np.ndarray,
        added_by: str | None,
        *,
        fingerprint: Fingerprint | None = None,
        same_url_is_new: bool = False,
        sentences: SentenceRows | None = None,
        summary: list[SummarySentence] | None = None,
    ) -> tuple[Article, bool]:
        """Store an article with its passages (and its summary) in one transaction; (article,
        False) if present."""
        ...

    def summaries(self, collection: str, ids: list[int]) -> dict[int, list[SummarySentence]]:
        """The stored summaries of these articles, where they have one."""
        ...

    def set_summaries(self, collection: str, summaries: dict[int, list[SummarySentence]]) -> None:
        """Store summaries chosen since their articles were (an older release's, a rebuild)."""
        ...

    def find_existing(
        self, collection: str, content_hash: str, url: str | None
    ) -> Article | None: ...

    def find_similar(self, collection: str, fingerprint: Fingerprint) -> Article | None: ...

    def unsigned_articles(self, collection: str, limit: int = 100) -> dict[int, list[str]]: ...

    def sign_articles(self, collection: str, fingerprints: dict[int, Fingerprint]) -> None: ...

    def get_article(self, collection: str, article_id: int) -> Article | None: ...

    def list_articles(self, collection: str) -> list[Article]: ...

    def collection_languages(self, collection: str) -> dict[str, int]:
        """How many articles of each language the collection holds (one stored before
        languages were counts as English)."""
        ...

    def set_article_languages(self, collection: str, languages: dict[int, str | None]) -> None:
        """Record the languages identified for articles stored before languages were."""
        ...

    def delete_article(self, collection: str, article_id: int) -> None: ...

    # passages and their vectors

    def passages(self, collection: str, article_id: int | None = None) -> list[Passage]: ...

    def article_passages(self, collection: str, article_id: int) -> list[Passage]: ...

    def leading_passages(
        self, collection: str, article_ids: list[int], paragraphs: int
    ) -> list[Passage]: ...

    def passages_by_id(self, ids: list[int]) -> dict[int, Passage]: ...

    def passage_ids(self, collection: str) -> np.ndarray: ...

    def iter_embeddings(
        self, collection: str, dim: int, ids: list[int] | None = None, batch: int = 10_000
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]: ...

    def sentence_vectors(self, ids: list[int], model: str, dim: int) -> dict[int, Stored]:
        """The sentence vectors `model` made for these passages, where it made them."""
        ...

    def unstaged_passages(self, collection: str, model: str, dim: int) -> list[Passage]: ...

    def stage_embeddings(
        self,
        collection: str,
        model: str,
        ids: np.ndarray,
        vectors: np.ndarray,
        sentences: SentenceRows | None = None,
    ) -> None: ...

    def swap_staged(self, collection: str, model: str, dim: int) -> bool: ...

    # feeds

    def add_feed(
        self, collection: str, url: str, title: str | None, added_by: str | None
    ) -> tuple[Feed, bool]: ...

    def feed_collections(self) -> list[str]: ...

    def list_feeds(self, collection: str) -> list[Feed]: ...

    def delete_feed(self, collection: str, feed_id: int) -> Feed | None: ...

    def seen_entries(self, feed_id: int) -> set[str]: ...

    def mark_seen(self, feed_id: int, entries: list[str]) -> None: ...
