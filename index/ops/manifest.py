"""A backup's `manifest.json` as a typed record, written by backup and read by restore here alone.

A backup folder may come from anyone (handed over, downloaded, left on a shared disk), so its
manifest is read as hostile: at most MAX_BYTES, strict UTF-8 JSON, every field of the type and
range restore needs, every file a name the data folder itself uses (storage/data_folder.py), and
every malformed shape one sentence, never a traceback. What is read is a `Manifest`; nothing
after this module looks at the raw JSON again.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from index.errors import BadInput, shown
from index.storage.data_folder import DATABASES, STORE, is_folder_file
from index.storage.tables import SCHEMA_VERSION

__all__ = ["MANIFEST", "MAX_BYTES", "PG_DUMP_FILE", "FileEntry", "Manifest", "read_manifest"]

MANIFEST = "manifest.json"
PG_DUMP_FILE = "articlebot.pgdump"
# A manifest names 3 files and counts 2 numbers per collection, about 450 bytes: 32 MB is some
# 70,000 collections (Discord servers), far past one bot, and small enough to read whole.
MAX_BYTES = 32 * 1024 * 1024
MAX_COUNT = 2**62  # SQLite's rowids, and anything an honest count reaches
_SHA256 = re.compile(r"[0-9a-f]{64}")
_TABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")

Kind = Literal["data folder", "postgresql"]


@dataclass(frozen=True)
class FileEntry:
    bytes: int
    sha256: str


@dataclass(frozen=True)
class Manifest:
    """What a backup holds: each file with its size and checksum, the counts to find again."""

    kind: Kind
    release: str
    created_at: str
    collections: dict[str, tuple[int, int]]  # name -> (articles, passages)
    files: dict[str, FileEntry]
    schema_version: int = 0  # the store's PRAGMA user_version (a data folder's backup)
    tables: dict[str, dict[str, int]] = field(default_factory=dict)  # bot's databases' rows
    source: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"format": 1, "kind": self.kind, "release": self.release}
        if self.kind == "data folder":
            data["schema_version"] = self.schema_version
        data["created_at"] = self.created_at
        if self.source is not None:
            data["source"] = self.source
        data["collections"] = {
            n: {"articles": a, "passages": p} for n, (a, p) in self.collections.items()
        }
        if self.kind == "data folder":
            data["tables"] = self.tables
        data["files"] = {n: {"bytes": f.bytes, "sha256": f.sha256} for n, f in self.files.items()}
        return data

    def write(self, folder: Path) -> None:
        path = folder / MANIFEST
        with path.open("x", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=2, ensure_ascii=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(path, 0o600)  # it names every collection (in Discord, every server)


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the backup at `folder`, checked whole, or BadInput in one sentence."""
    path = folder / MANIFEST
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_NONBLOCK)
    except OSError:
        raise BadInput(
            f"{shown(folder)} is not an articlebot backup (it has no readable {MANIFEST}); give "
            "a folder that `articlebot backup` wrote."
        ) from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _damaged(folder, f"{MANIFEST} is not a plain file")
        raw = f.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise _damaged(folder, f"{MANIFEST} is larger than {MAX_BYTES // 2**20} MB")
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except RecursionError:
        raise _damaged(folder, "its JSON is nested too deeply") from None
    except (UnicodeDecodeError, ValueError):
        raise BadInput(
            f"{shown(folder)} is not an articlebot backup ({MANIFEST} is not JSON); give a folder "
            "that `articlebot backup` wrote."
        ) from None
    return _Reader(folder).manifest(data)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a manifest holds")


def _damaged(folder: Path, what: str) -> BadInput:
    return BadInput(
        f"{shown(folder)}/{MANIFEST} is damaged ({what}); restore from another backup, or take a "
        "new one with `articlebot backup`."
    )


class _Reader:
    """Checks each field of the raw JSON, naming the first that is wrong."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def fail(self, what: str) -> BadInput:
        return _damaged(self.folder, what)

    def object(self, value: Any, what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{what} is not an object")
        return value

    def count(self, value: Any, what: str) -> int:
        # bool is an int to Python, never a count to us
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
            raise self.fail(f"{what} is not a count")
        return value

    def text(self, value: Any, what: str, limit: int = 200) -> str:
        if not isinstance(value, str) or len(value) > limit or "\x00" in value:
            raise self.fail(f"{what} is not a short text")
        return value

    def manifest(self, data: Any) -> Manifest:
        data = self.object(data, "the manifest")
        kind = data.get("kind")
        if kind not in ("data folder", "postgresql"):
            raise self.fail("its kind is neither a data folder nor postgresql")
        release = self.text(data.get("release", "unknown"), "its release", 64)
        version = 0
        if kind == "data folder":
            version = self.count(data.get("schema_version"), "its schema version")
            if version > SCHEMA_VERSION:
                raise BadInput(
                    f"{shown(self.folder)} was made by articlebot {shown(release)}, whose data is "
                    "newer than this version reads; install that version or a later one to "
                    "restore it."
                )
            if version < 1:
                raise self.fail("its schema version is not one articlebot ever wrote")
        files = self.files(data.get("files"), kind)
        return Manifest(
            kind=kind,
            release=release,
            created_at=self.text(data.get("created_at", ""), "its time"),
            collections=self.collections(data.get("collections", {})),
            files=files,
            schema_version=version,
            tables=self.tables(data.get("tables", {}), files) if kind == "data folder" else {},
            source=self.text(data["source"], "its source", 4096) if "source" in data else None,
        )

    def files(self, value: Any, kind: str) -> dict[str, FileEntry]:
        files: dict[str, FileEntry] = {}
        for name, entry in self.object(value, "its list of files").items():
            allowed = name == PG_DUMP_FILE if kind == "postgresql" else is_folder_file(name)
            if not allowed:
                raise self.fail(f"it names {shown(name, 80)}, not a file of a data folder")
            entry = self.object(entry, f"the entry of {name}")
            sha256 = entry.get("sha256")
            if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
                raise self.fail(f"the checksum of {name} is not a SHA-256")
            files[name] = FileEntry(self.count(entry.get("bytes"), f"the size of {name}"), sha256)
        needed = PG_DUMP_FILE if kind == "postgresql" else STORE
        if needed not in files:
            raise self.fail(f"it lists no {needed}")
        return files

    def collections(self, value: Any) -> dict[str, tuple[int, int]]:
        out = {}
        # Any name the store can hold is a collection's (a JSON key is always a string): the
        # counts are compared with the restored store's, which holds exactly these names.
        for name, counts in self.object(value, "its collections").items():
            counts = self.object(counts, f"the counts of collection {shown(name, 80)}")
            out[name] = (
                self.count(counts.get("articles"), f"the articles of {shown(name, 80)}"),
                self.count(counts.get("passages"), f"the passages of {shown(name, 80)}"),
            )
        return out

    def tables(self, value: Any, files: dict[str, FileEntry]) -> dict[str, dict[str, int]]:
        out = {}
        for name, rows in self.object(value, "its table counts").items():
            if name not in DATABASES or name == STORE or name not in files:
                raise self.fail(f"it counts the tables of {shown(name, 80)}, not a backed-up file")
            counts = {}
            for table, n in self.object(rows, f"the table counts of {name}").items():
                if not _TABLE.fullmatch(table):
                    raise self.fail(f"it counts a table {shown(table, 80)} of {name}")
                counts[table] = self.count(n, f"the rows of {name}'s {table}")
            out[name] = counts
        return out
