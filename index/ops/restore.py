"""`articlebot restore SRC`: a backup put back into a new or empty data folder, and checked.

A backup folder may come from anyone, so restore trusts nothing in it and reaches nothing outside
it or the new folder:
- the manifest is a typed record read once (ops/manifest.py): every file it names is one a data
  folder holds (storage/data_folder.py), so no name climbs out;
- the backup holds plain files and folders only: a symbolic link (to a folder of its own, through
  which a name could climb out after all), a device, a pipe or a socket refuses it whole;
- each file is opened without following links, checked to be a plain file inside the backup, and
  copied into the staging folder while its checksum is taken, so what was checked is what is used;
- a database is read only once copied into the staging folder (no file elsewhere is opened, nor
  gets a `-wal` or `-shm` beside it), and only after its schema proved to be the one this release
  declares (storage/schema_check.py), every statement bounded in time;
- no derived file of the backup is used: each collection's FAISS index and keyword (BM25) index
  is built again from the restored store (its vectors and texts), so FAISS never reads a file
  from the backup, and a copy tampered with (or another collection's, with the same count) can
  neither answer nor bring in another collection's passages.
Anything wrong: one sentence, and nothing left behind (the staging folder is removed, and the
target is left as it was: ops/copies.py).

Building rather than comparing, measured at 100,000 passages of 384 dimensions (a synthetic
data folder filled through the store by tools/bench/backup.py's `fill_synthetic`, 40 random
words a passage; two shared cores), each step alone:
    reading the stored vectors                               0.36 s
    a flat index built from them                             0.46 s
    a flat index file compared with them (ids and vectors)   0.42 s
    the IVF index (past 30,000 passages) trained and filled  3.5 s
    the keyword index built (every passage tokenized)        23.8 s
    the saved keyword index loaded, its ids compared         0.33 s
Comparing a FAISS file costs what building it costs, and comparing a keyword index with the
store means tokenizing every passage again, which is building it (only its ids compare cheaply,
and they do not show which words it holds): so both are built. The whole restore of that
folder's backup (290 MB) took 28.4 to 32.5 s, against 5.6 to 11.2 s when the copied keyword
index was kept (the IVF index was built again already; two runs each, on cores other work
shared), measured with

    .venv/bin/python -m tools.bench.backup --synthetic 100000     # its restore_s
    articlebot backup B --data-dir D && time articlebot restore B --data-dir E

and each step above timed alone on that folder's store (VectorIndex.build_from with each kind,
EmbeddedBackend.rebuild, KeywordIndex.load).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
from pathlib import Path

from index.errors import BadInput, StorageError, shown
from index.ops.copies import staged
from index.ops.copy_report import CopyResult, folder_size
from index.ops.manifest import PG_DUMP_FILE, FileEntry, Manifest, read_manifest
from index.search.embedded_backend import EmbeddedBackend
from index.storage.data_folder import INDEXES, STORE, DataFolder
from index.storage.sqlite_backup import check_seconds, collection_counts, restored_problem
from index.storage.sqlite_store import Store

__all__ = ["restore"]

# A backup holds a manifest, 3 databases and 3 files per collection, in 2 levels of folders.
MAX_ENTRIES = 300_000
MAX_DEPTH = 4
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX; elsewhere, the walk has refused links


def restore(source: Path, data_dir: Path) -> CopyResult:
    """The backup at `source` restored into `data_dir` (absent or empty), then checked: each
    file against its checksum, each database's schema and integrity, the counts against the
    manifest; then each collection's indexes built from the restored store."""
    started = time.perf_counter()
    if not source.is_dir():
        raise BadInput(
            f"{shown(source)} is not an articlebot backup (it is not a folder); give a folder "
            "that `articlebot backup` wrote."
        )
    root = source.resolve()
    target = data_dir.resolve()
    if target.is_relative_to(root) or root.is_relative_to(target):
        raise BadInput(
            f"{shown(data_dir)} and the backup {shown(source)} overlap; restore into a new or "
            "empty folder outside the backup."
        )
    _refuse_special_files(source, root)
    manifest = read_manifest(root)
    if manifest.kind == "postgresql":
        raise BadInput(
            f"{shown(source)} holds a PostgreSQL dump; restore it with `pg_restore --dbname "
            f"postgresql://... {shown(source / PG_DUMP_FILE)}` into an empty database."
        )
    with staged(data_dir, "restore") as staging:
        for name, entry in manifest.files.items():
            if not name.startswith(f"{INDEXES}/"):  # derived files: built again below
                _copy_checked(source, root, name, entry, staging)
        _check_databases(manifest, staging)
        _build_indexes(staging, manifest.collections)
    articles = sum(a for a, _ in manifest.collections.values())
    return CopyResult(
        "restored",
        data_dir,
        articles=articles,
        passages=sum(p for _, p in manifest.collections.values()),
        bytes=folder_size(data_dir),
        collections=len(manifest.collections),
        seconds=time.perf_counter() - started,
    )


def _refuse_special_files(source: Path, root: Path) -> None:
    """Refuse a backup holding anything but plain files and folders, however deep."""
    seen = 0
    pending = [(root, 0)]
    while pending:
        folder, depth = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise StorageError(
                f"Cannot read {shown(folder)} ({exc.strerror or exc}); check its permissions."
            ) from None
        for entry in entries:
            seen += 1
            where = shown(Path(entry.path).relative_to(root).as_posix(), 80)
            if entry.is_symlink():
                what = "a symbolic link"
            elif entry.is_dir(follow_symlinks=False):
                if depth + 1 >= MAX_DEPTH:
                    what = "a folder deeper than a backup's"
                else:
                    pending.append((Path(entry.path), depth + 1))
                    continue
            elif entry.is_file(follow_symlinks=False):
                continue
            else:
                what = "a device, pipe or socket"
            raise BadInput(
                f"The backup {shown(source)} holds {where}, {what}; a backup holds plain files "
                "only, so restore from another backup."
            )
        if seen > MAX_ENTRIES:
            raise BadInput(
                f"The backup {shown(source)} holds more than {MAX_ENTRIES:,} files, far more "
                "than a backup writes; restore from another backup."
            )


def _copy_checked(source: Path, root: Path, name: str, entry: FileEntry, staging: Path) -> None:
    """Copy one file the manifest names into the staging folder, checking its size and checksum
    on the very bytes copied."""
    path = root / name
    broken = StorageError(
        f"The backup's {shown(name)} is missing or does not match its checksum; restore from "
        "another backup."
    )
    # The names were checked against the data folder's own (no `..`, no absolute path) and the
    # backup holds no link; resolving after the join proves it once more before any open.
    if not path.resolve().is_relative_to(root):
        raise BadInput(
            f"The backup {shown(source)} names {shown(name)}, outside it; it is damaged."
        )
    target = staging / name
    if not target.parent.resolve().is_relative_to(staging.resolve()):
        raise BadInput(
            f"The backup {shown(source)} names {shown(name)}, outside the new folder; it is "
            "damaged."
        )
    try:
        fd = _open_inside(root, name)
    except FileNotFoundError:
        raise broken from None
    except OSError as exc:
        if exc.errno == errno.ELOOP or exc.errno == errno.ENOTDIR:  # a link put there since
            raise BadInput(
                f"The backup {shown(source)} holds a symbolic link at {shown(name)}; a backup "
                "holds plain files only, so restore from another backup."
            ) from None
        exc.filename = str(source / name)
        raise
    with os.fdopen(fd, "rb") as src:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != entry.bytes:
            raise broken
        target.parent.mkdir(mode=0o700, exist_ok=True)
        digest = hashlib.sha256()
        out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(out, "wb") as dst:
            copied = 0
            while chunk := src.read(min(1 << 20, entry.bytes + 1 - copied)):
                digest.update(chunk)
                dst.write(chunk)
                copied += len(chunk)
    if copied != entry.bytes or digest.hexdigest() != entry.sha256:
        raise broken


def _open_inside(root: Path, name: str) -> int:
    """`root/name` opened for reading, one folder at a time and none of them followed if it is
    a link: the folders checked a moment ago cannot have become links meanwhile."""
    *folders, leaf = name.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for folder in folders:
            inner = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = inner
        return os.open(leaf, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)


def _check_databases(manifest: Manifest, staging: Path) -> None:
    """Each restored database against the release's schema, SQLite's integrity check and the
    manifest's counts: a database is read only here, in the staging folder."""
    for path in sorted(staging.glob("*.db")):
        version = manifest.schema_version if path.name == STORE else 0
        tables = manifest.tables.get(path.name) if path.name != STORE else None
        problem = restored_problem(path, path.name, version, tables)
        if problem is not None:
            raise StorageError(f"The backup's {path.name} {problem}; restore from another backup.")
    store = staging / STORE
    if collection_counts(store, seconds=check_seconds(store)) != manifest.collections:
        raise StorageError(
            "The restored data does not hold the articles its manifest counts; restore from "
            "another backup."
        )


def _build_indexes(data_dir: Path, counts: dict[str, tuple[int, int]]) -> None:
    """Each collection's FAISS and keyword indexes built from the restored store, so that the
    first question is answered at once from the store's own passages and `stats` shows every
    passage indexed."""
    store = Store(DataFolder(data_dir).store)  # brings an older release's schema up to date
    try:
        for name, (_, passages) in counts.items():
            indexed = EmbeddedBackend(store, name, data_dir).rebuild().indexed
            if indexed != passages:
                raise StorageError(
                    f"The collection {shown(name, 80)} was restored with {passages} passages but "
                    f"{indexed} of them have vectors; restore from another backup."
                )
    finally:
        store.close()
