"""The files of a data folder, named in one place: the article store, the bot's two small
databases, and each collection's derived indexes under `indexes/`.

The library opens them, the embedded backend writes the indexes, backup copies them and restore
accepts no other name: a backup's manifest naming anything else is refused, so a name can never
reach outside the folder it is restored into.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from index.errors import StorageError, shown

__all__ = [
    "BACKUP_RECORD",
    "CONVERSATIONS",
    "CUT_SHORT",
    "DATABASES",
    "INDEXES",
    "INDEX_SUFFIXES",
    "KEYWORDS_SUFFIX",
    "SETTINGS",
    "STORE",
    "FAISS_SUFFIX",
    "SIDECAR_SUFFIX",
    "DataFolder",
    "index_files",
    "is_folder_file",
    "refuse_cut_short",
]

STORE = "articlebot.db"  # the source of truth: texts, metadata, embeddings
CONVERSATIONS = "conversations.db"  # the bot's questions, answers and votes
SETTINGS = "settings.db"  # what each server's admins chose
DATABASES = (STORE, CONVERSATIONS, SETTINGS)
INDEXES = "indexes"
# What the last backups did (ops/backup_record.py): the data folder's own, never backed up.
BACKUP_RECORD = "backup-record.json"
# Written into a folder before a backup or restore moves its entries in one at a time (a mount
# point, which cannot be renamed over) and removed once the last is in: a folder that holds it
# is a move cut short (a kill, a reboot), half a data folder that is never opened.
CUT_SHORT = ".articlebot-cut-short"
# One collection's derived files: the FAISS index, its sidecar (model, dimension, count) and the
# saved keyword index, named from the collection (search/index_file.file_stem).
FAISS_SUFFIX, SIDECAR_SUFFIX, KEYWORDS_SUFFIX = ".faiss", ".json", ".bm25.npz"
INDEX_SUFFIXES = (FAISS_SUFFIX, SIDECAR_SUFFIX, KEYWORDS_SUFFIX)

# An index file's stem is search/index_file.file_stem's: [A-Za-z0-9_.-], at most 64 characters
# and a hash, so no `/`; it may be or start with dots (a collection ".x", ".", ".."), and the
# suffix after it keeps the file's name from ever being `.` or `..`.
_INDEX_NAME = re.compile(
    rf"{INDEXES}/[A-Za-z0-9_.-]{{1,80}}({'|'.join(re.escape(s) for s in INDEX_SUFFIXES)})"
)


@dataclass(frozen=True)
class DataFolder:
    """A data folder's paths, by what each file is."""

    root: Path

    @property
    def store(self) -> Path:
        return self.root / STORE

    @property
    def indexes(self) -> Path:
        return self.root / INDEXES

    def databases(self) -> list[Path]:
        return [self.root / name for name in DATABASES]

    def faiss_file(self, stem: str) -> Path:
        """The FAISS index of the collection whose file stem is `stem`."""
        return self.indexes / f"{stem}{FAISS_SUFFIX}"


def index_files(faiss_file: Path) -> list[Path]:
    """A collection's derived files, named from its FAISS file."""
    return [faiss_file.with_suffix(suffix) for suffix in INDEX_SUFFIXES]


def is_folder_file(name: str) -> bool:
    """Whether `name` (relative, `/`-separated) is one of the files a data folder holds."""
    return name in DATABASES or _INDEX_NAME.fullmatch(name) is not None


def refuse_cut_short(root: Path) -> None:
    """Refuse a data folder that a backup or restore was moving into when it was stopped."""
    if (root / CUT_SHORT).exists():
        raise StorageError(
            f"{shown(root)} holds a restore that was stopped partway, so it is not opened; run the "
            "same `articlebot restore` into it again (it clears the half copy first)."
        )
