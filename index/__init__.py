"""articlebot's core: articles in, cited answers out. Never imports the Discord adapter."""

from __future__ import annotations

from index.collection import Collection, Progress
from index.errors import (
    ArticlebotError,
    ArticleNotFound,
    BadInput,
    FetchRefused,
    IndexMismatch,
    StorageError,
)
from index.ingest.readers import Limits
from index.library import Library
from index.records import (
    AddResult,
    Answer,
    Article,
    Citation,
    Document,
    RebuildResult,
    Stats,
    Summary,
)

__all__ = [
    "AddResult",
    "Answer",
    "Article",
    "ArticleNotFound",
    "ArticlebotError",
    "BadInput",
    "Citation",
    "Collection",
    "Document",
    "FetchRefused",
    "IndexMismatch",
    "Library",
    "Limits",
    "Progress",
    "RebuildResult",
    "Stats",
    "Summary",
    "StorageError",
]
