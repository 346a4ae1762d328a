"""What a backup or a restore reports: the folder it wrote, its counts and size; the checksums
a backup's manifest keeps of each file and a restore checks."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CopyResult", "folder_size", "sha256"]


@dataclass(frozen=True)
class CopyResult:
    """What a backup wrote or a restore put back; `--json` names the folder by `key`."""

    key: str  # "backup" or "restored"
    folder: Path
    articles: int
    passages: int
    bytes: int
    collections: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {
            self.key: str(self.folder),
            "articles": self.articles,
            "passages": self.passages,
            "bytes": self.bytes,
        }


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
