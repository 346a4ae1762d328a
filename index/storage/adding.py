"""The add algorithm, written once for both stores.

Inside the store's write lock (SQLite's file lock, PostgreSQL's per-collection advisory lock),
an add looks again for the same text or URL (another process may have stored it since the
caller looked), then for a near-duplicate, and only then takes the next article number and
inserts the article, its passages and its signature. Each store supplies the statements through
`AddWrite`; the order and the rules are here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from index.ingest.near_duplicates import Fingerprint
from index.records import Article, Document, SummarySentence
from index.storage.sentence_rows import SentenceRows

__all__ = ["AddWrite", "NewArticle", "add_article", "added_or_present"]


@dataclass(frozen=True)
class NewArticle:
    """What one add inserts: the article's row, its passages and their vectors."""

    number: int
    doc: Document
    content_hash: str
    added_by: str | None
    passages: list[tuple[int, int, str, str | None]]  # paragraph, piece, text, heading
    vectors: np.ndarray  # float32, one row per passage
    sentences: SentenceRows | None = None  # each passage's sentence vectors, where made
    summary: list[SummarySentence] | None = None  # its summary's sentences, chosen at add time


class AddWrite(Protocol):
    """One store's statements for an add, run inside its write lock for one collection."""

    def find_existing(self, content_hash: str, url: str | None) -> Article | None: ...

    def find_similar(self, fingerprint: Fingerprint) -> Article | None: ...

    def next_number(self) -> int: ...

    def insert(self, article: NewArticle) -> int: ...

    def sign(self, article_id: int, fingerprint: Fingerprint) -> None: ...


def add_article(
    write: AddWrite,
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
) -> Article | int:
    """The stored article this one repeats, or the id of the article now stored.

    With a fingerprint, an article like a stored one counts as present too, and a new one is
    signed. `same_url_is_new`: a new version of a page (a refresh) is matched on its exact text
    alone, not on its URL or on being like the version it replaces.
    """
    url = None if same_url_is_new else doc.url
    existing = write.find_existing(content_hash, url)
    if not existing and fingerprint and not same_url_is_new:
        existing = write.find_similar(fingerprint)
    if existing:
        return existing
    headings = doc.headings or [None] * len(doc.paragraphs)
    article_id = write.insert(
        NewArticle(
            number=write.next_number(),
            doc=doc,
            content_hash=content_hash,
            added_by=added_by,
            passages=[(p, piece, text, headings[p - 1]) for p, piece, text in passages],
            vectors=np.ascontiguousarray(embeddings, dtype=np.float32),
            sentences=sentences,
            summary=summary,
        )
    )
    if fingerprint:
        write.sign(article_id, fingerprint)
    return article_id


def added_or_present(
    found: Article | int, read: Callable[[int], Article | None]
) -> tuple[Article, bool]:
    """What `insert_article` returns for `add_article`'s result: (the article, whether it is new).

    A new article is read back with `read` once its transaction has committed, so that it
    carries what the database filled in (its passage count)."""
    if isinstance(found, Article):
        return found, False
    article = read(found)
    assert article is not None
    return article, True
