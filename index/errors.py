"""Domain errors. Each message is one sentence that tells the user what to do."""

from __future__ import annotations

__all__ = [
    "ArticlebotError",
    "ArticleNotFound",
    "BadInput",
    "DiskFull",
    "FetchRefused",
    "IndexMismatch",
    "StorageError",
]


class ArticlebotError(Exception):
    """Base of every error the user may see; its message is shown as it is."""


class BadInput(ArticlebotError):
    """The file, text or question cannot be used."""


class ArticleNotFound(ArticlebotError):
    """No article with that id in the collection."""


class FetchRefused(ArticlebotError):
    """A URL was refused or could not be fetched."""


class IndexMismatch(ArticlebotError):
    """Stored vectors were made by another model or dimension."""


class StorageError(ArticlebotError):
    """The data folder cannot be opened, read or written (permissions, full disk, damage)."""


class DiskFull(StorageError):
    """The disk holding the data folder is full: nothing was stored, nothing stored was lost."""
