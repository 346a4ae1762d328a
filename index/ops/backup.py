"""`articlebot backup DEST` and `articlebot restore SRC`: a data folder copied while the bot runs,
and put back into an empty folder, checked.

What a backup holds:
- every SQLite file of the folder (the articles' store, the bot's conversations and votes, the
  servers' settings), each copied with SQLite's online backup API (storage/sqlite_backup.py):
  one committed state of each, however other processes go on adding meanwhile;
- each collection's derived indexes (the FAISS file and its sidecar, the saved keyword index),
  copied as they are, under the lock their writers take, so a file and its sidecar are a pair;
- `manifest.json`, written last: the release, the schema version, the articles and passages of
  each collection, the rows of the bot's tables, and each file's size and SHA-256.

The indexes are copied rather than rebuilt at restore, measured with index/ops/bench/backup.py:
at 100,000 passages the backup took 1.1 to 1.7 s and the restore 2.2 to 4.6 s, checks
included, where rebuilding both indexes from the store took 55 to 59 s (the keyword index's
tokenizing, the IVF index's training); at SQuAD dev's 2,084 passages 0.14 s, 0.17 s against
0.57 s. The price is
size: the indexes are about a third of a backup (82 of 291 MB; 6.5 of 14.9). A copied index also
answers exactly as the source's, where an IVF index trained again would have other lists, so
near ties could rank otherwise. A copy taken while adds ran may be a few vectors ahead of the
store's snapshot or behind it; restore brings it in line from the store, as opening a
collection always does.

The embedding model's int8 export (`models/`) is not backed up: it is made again from the
installed package at the first question (about a minute), and it depends on the CPU, so a copy
from another machine would be the wrong one.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from index.errors import BadInput, DiskFull, StorageError
from index.search.embedded_backend import EmbeddedBackend
from index.storage.locking import file_lock
from index.storage.sqlite_backup import (
    collection_counts,
    copy_database,
    held_by_a_process,
    integrity,
    is_database,
    schema_version,
    table_counts,
)
from index.storage.sqlite_store import Store
from index.storage.tables import SCHEMA_VERSION

__all__ = ["CopyResult", "backup", "backup_postgres", "restore"]

MANIFEST = "manifest.json"
STORE_FILE = "articlebot.db"
PG_DUMP_FILE = "articlebot.pgdump"
INDEX_SUFFIXES = (".faiss", ".json", ".bm25.npz")  # one collection's derived files


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


def release() -> str:
    try:
        return metadata.version("articlebot")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


# backing up


def backup(data_dir: Path, dest: Path) -> CopyResult:
    """A consistent copy of the data folder at `dest` (a new or empty folder)."""
    started = time.perf_counter()
    if not is_database(data_dir / STORE_FILE):
        raise BadInput(
            f"{data_dir} holds no articlebot data to back up; give the bot's data folder with "
            "--data-dir (or ARTICLEBOT_DATA_DIR)."
        )
    _refuse_unless_empty(dest, "backup")
    with _staged(dest) as staging:
        for path in sorted(data_dir.glob("*.db")):  # the store, conversations.db, settings.db
            if path.is_file() and is_database(path):
                copy_database(path, staging / path.name)
        _copy_indexes(data_dir / "indexes", staging / "indexes")
        counts = collection_counts(staging / STORE_FILE)
        manifest = {
            "format": 1,
            "kind": "data folder",
            "release": release(),
            "schema_version": schema_version(staging / STORE_FILE),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "source": str(data_dir.resolve()),
            "collections": {n: {"articles": a, "passages": p} for n, (a, p) in counts.items()},
            "tables": {
                p.name: table_counts(p)
                for p in sorted(staging.glob("*.db"))
                if p.name != STORE_FILE
            },
            "files": {
                str(p.relative_to(staging)): {"bytes": p.stat().st_size, "sha256": _sha256(p)}
                for p in sorted(staging.rglob("*"))
                if p.is_file()
            },
        }
        _write_manifest(staging, manifest)
    return CopyResult(
        "backup",
        dest,
        articles=sum(a for a, _ in counts.values()),
        passages=sum(p for _, p in counts.values()),
        bytes=_size(dest),
        collections=len(counts),
        seconds=time.perf_counter() - started,
    )


def _copy_indexes(source: Path, target: Path) -> None:
    if not source.is_dir():
        return
    target.mkdir(mode=0o700)
    for faiss_file in sorted(source.glob("*.faiss")):
        # Under the lock every save of this collection's index takes: the FAISS file and its
        # sidecar (model, dimension, count) are copied as one pair, never from two saves.
        with file_lock(faiss_file.with_suffix(".lock")):
            for suffix in INDEX_SUFFIXES:
                path = faiss_file.with_suffix(suffix)
                if path.is_file():
                    shutil.copyfile(path, target / path.name)
                    os.chmod(target / path.name, 0o600)


def backup_postgres(
    url: str, dest: Path, counts: Callable[[], dict[str, tuple[int, int]]]
) -> CopyResult:
    """`pg_dump` of the database into `dest`, when PostgreSQL's client tools are installed."""
    started = time.perf_counter()
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise BadInput(
            "The articles are in PostgreSQL and pg_dump is not installed here, so back up the "
            "database where it is: `pg_dump --format=custom --file articlebot.pgdump "
            "postgresql://...` (or with your host's backups)."
        )
    _refuse_unless_empty(dest, "backup")
    before = counts()
    parts = urllib.parse.urlsplit(url)
    env = dict(os.environ)
    if parts.password:  # given to pg_dump in its environment, not on a command line `ps` shows
        env["PGPASSWORD"] = urllib.parse.unquote(parts.password)
        host = parts.netloc.rpartition("@")[2]
        user = parts.username or ""
        url = urllib.parse.urlunsplit(parts._replace(netloc=f"{user}@{host}" if user else host))
    with _staged(dest) as staging:
        done = subprocess.run(
            [pg_dump, "--format=custom", f"--file={staging / PG_DUMP_FILE}", f"--dbname={url}"],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
            raise StorageError(f"pg_dump could not back up the database ({reason}).")
        dump = staging / PG_DUMP_FILE
        os.chmod(dump, 0o600)
        manifest = {
            "format": 1,
            "kind": "postgresql",
            "release": release(),
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "collections": {n: {"articles": a, "passages": p} for n, (a, p) in before.items()},
            "files": {PG_DUMP_FILE: {"bytes": dump.stat().st_size, "sha256": _sha256(dump)}},
        }
        _write_manifest(staging, manifest)
    return CopyResult(
        "backup",
        dest,
        articles=sum(a for a, _ in before.values()),
        passages=sum(p for _, p in before.values()),
        bytes=_size(dest),
        collections=len(before),
        seconds=time.perf_counter() - started,
    )


# restoring


def restore(source: Path, data_dir: Path) -> CopyResult:
    """The backup at `source` restored into `data_dir` (absent or empty), then checked: each
    file against its checksum, each database's integrity, the counts against the manifest, and
    the indexes against the store."""
    started = time.perf_counter()
    manifest = _read_manifest(source)
    if manifest.get("kind") == "postgresql":
        raise BadInput(
            f"{source} holds a PostgreSQL dump; restore it with `pg_restore --dbname "
            f"postgresql://... {source / PG_DUMP_FILE}` into an empty database."
        )
    if int(manifest.get("schema_version", 0)) > SCHEMA_VERSION:
        raise BadInput(
            f"{source} was made by articlebot {manifest.get('release')}, whose data is newer "
            "than this version reads; install that version or a later one to restore it."
        )
    _refuse_unless_empty(data_dir, "restore")
    files: dict[str, dict[str, Any]] = manifest["files"]
    for name, expected in files.items():
        path = _inside(source, name)
        if not path.is_file() or _sha256(path) != expected["sha256"]:
            raise StorageError(
                f"The backup's {name} is missing or does not match its checksum; restore from "
                "another backup."
            )
    expected_counts = {
        n: (c["articles"], c["passages"]) for n, c in manifest.get("collections", {}).items()
    }
    with _staged(data_dir) as staging:
        for name in files:
            target = staging / name
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            shutil.copyfile(_inside(source, name), target)
            os.chmod(target, 0o600)
        for path in sorted(staging.glob("*.db")):
            verdict = integrity(path)
            if verdict != "ok":
                raise StorageError(
                    f"The restored {path.name} fails SQLite's integrity check "
                    f"({verdict.splitlines()[0]}); restore from another backup."
                )
        if collection_counts(staging / STORE_FILE) != expected_counts or any(
            table_counts(staging / name) != rows
            for name, rows in manifest.get("tables", {}).items()
        ):
            raise StorageError(
                "The restored data does not hold the articles its manifest counts; restore from "
                "another backup."
            )
    _bring_indexes_in_line(data_dir, expected_counts)
    return CopyResult(
        "restored",
        data_dir,
        articles=sum(a for a, _ in expected_counts.values()),
        passages=sum(p for _, p in expected_counts.values()),
        bytes=_size(data_dir),
        collections=len(expected_counts),
        seconds=time.perf_counter() - started,
    )


def _bring_indexes_in_line(data_dir: Path, counts: dict[str, tuple[int, int]]) -> None:
    """Mend each collection's copied index from the restored store (the vectors added or removed
    between the store's snapshot and the index's copy), and load its keyword index, so that the
    first question is answered at once and `stats` shows every passage indexed."""
    store = Store(data_dir / STORE_FILE)  # brings an older release's schema up to date
    try:
        for name, (_, passages) in counts.items():
            backend = EmbeddedBackend(store, name, data_dir)
            indexed = backend.state().indexed
            if passages:
                backend.keywords()
            if indexed != passages:
                raise StorageError(
                    f"The collection {name!r} was restored with {passages} passages but its "
                    f"index holds {indexed}; run `articlebot rebuild --collection {name}`."
                )
    finally:
        store.close()


# the folders


def _refuse_unless_empty(path: Path, what: str) -> None:
    if path.exists() and not path.is_dir():
        raise BadInput(f"{path} is a file; give a new or empty folder to {what} into.")
    if not path.is_dir() or not any(path.iterdir()):
        return
    if what == "restore" and held_by_a_process(path / STORE_FILE):
        raise BadInput(
            f"{path} is the data folder of a running articlebot (the bot or a command); stop "
            "it, then restore into a new or empty folder."
        )
    if what == "restore":
        raise BadInput(
            f"{path} is not empty; restore into a new or empty folder (--data-dir), or move "
            "its files away first."
        )
    raise BadInput(f"{path} is not empty; give a new or empty folder for the backup.")


@contextlib.contextmanager
def _staged(target: Path) -> Iterator[Path]:
    """A folder beside `target` to write into, renamed to `target` once everything in it is
    written: a backup or restore cut short (a kill, a full disk) leaves no half folder that
    looks whole. A full disk becomes its one sentence."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.parent / f".{target.name}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir(mode=0o700)
        yield staging
        _rename_into(staging, target)
    except DiskFull as exc:  # met by SQLite while it wrote a copy
        raise _no_room(target) from exc
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise _no_room(target) from exc
        raise StorageError(
            f"Cannot write {target} ({exc.strerror or exc}); check the folder's permissions."
        ) from exc
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _no_room(target: Path) -> DiskFull:
    return DiskFull(
        f"The disk holding {target.parent} is full, so {target} was not written (nothing half "
        "written is left); free some space there or choose a folder on another disk."
    )


def _rename_into(staging: Path, target: Path) -> None:
    try:
        os.replace(staging, target)  # replaces an empty folder too
    except OSError:  # an empty mount point, say: move what is inside instead
        for entry in staging.iterdir():
            os.replace(entry, target / entry.name)


def _inside(folder: Path, name: str) -> Path:
    """A file the manifest names, never outside the backup's folder."""
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()):
        raise BadInput(f"The backup's manifest names {name!r}, outside the backup; it is damaged.")
    return path


def _read_manifest(source: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise BadInput(
            f"{source} is not an articlebot backup (it has no readable {MANIFEST}); give a "
            "folder that `articlebot backup` wrote."
        ) from None
    if not _readable(manifest):
        raise BadInput(f"{source}/{MANIFEST} is damaged; restore from another backup.")
    return manifest


def _readable(manifest: Any) -> bool:
    """Whether the manifest has the shape restore reads (checked once, not met as a KeyError)."""
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return False
    files, collections = manifest["files"], manifest.get("collections", {})
    if not isinstance(collections, dict) or not isinstance(manifest.get("schema_version", 0), int):
        return False
    return all(
        isinstance(f, dict) and isinstance(f.get("sha256"), str) for f in files.values()
    ) and all(
        isinstance(c, dict)
        and isinstance(c.get("articles"), int)
        and isinstance(c.get("passages"), int)
        for c in collections.values()
    )


def _write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    path = folder / MANIFEST
    with path.open("w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=2, ensure_ascii=False)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.chmod(path, 0o600)  # it names every collection (in Discord, every server)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
