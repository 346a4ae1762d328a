"""articlebot's core: articles in, cited answers out. Never imports the Discord adapter."""

from __future__ import annotations

from .collection import Collection, Progress
from .errors import (
    ArticlebotError,
    ArticleNotFound,
    BadInput,
    FetchRefused,
    IndexMismatch,
    StorageError,
)
from .library import Library
from .models import AddResult, Answer, Article, Citation, Document, RebuildResult, Stats
from .sources import Limits

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
    "StorageError",
]
