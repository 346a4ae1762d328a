"""`articlebot backup DEST`: a data folder copied while the bot runs (ops/restore.py puts it back
into an empty folder, checked).

What a backup holds:
- every SQLite file of the folder (the articles' store, the bot's conversations and votes, the
  servers' settings), each copied with SQLite's online backup API (storage/sqlite_backup.py):
  one committed state of each, however other processes go on adding meanwhile;
- each collection's derived indexes (the FAISS file and its sidecar, the saved keyword index),
  copied as they are, under the lock their writers take, so a file and its sidecar are a pair;
- `manifest.json`, written last: the release, the schema version, the articles and passages of
  each collection, the rows of the bot's tables, and each file's size and SHA-256.

The indexes are copied as they are, though restore never uses them: it builds both again from
the restored store (ops/restore.py says why and what it costs). They stay in a backup as the
data folder had them, for an operator to compare or inspect; they are about a third of its
size (82 of 291 MB at 100,000 passages; 6.5 of 14.9 MB at SQuAD dev's 2,084), measured with
`python -m tools.bench.backup`.

The embedding model's int8 export is not backed up: it lives in the user's model cache, not in
the data folder, and is made again from the installed package when a machine lacks it (half a
minute); all-MiniLM-L6-v2's exports depend on the CPU, so a copy from another machine could be
the wrong one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import urllib.parse
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from index.errors import BadInput, StorageError, shown, without_passwords
from index.ops.copies import staged
from index.ops.copy_report import CopyResult, folder_size, sha256
from index.ops.manifest import PG_DUMP_FILE, FileEntry, Manifest
from index.storage.data_folder import STORE, DataFolder, index_files
from index.storage.locking import file_lock
from index.storage.sqlite_backup import (
    collection_counts,
    copy_database,
    is_database,
    schema_version,
    table_counts,
)
from index.version import version

__all__ = ["PG_DUMP_TIMEOUT_S", "CopyResult", "backup", "backup_postgres", "pg_dump_call"]

# The longest pg_dump may run by default (`backup --timeout`). pg_dump itself waits for ever on
# a lock another transaction holds, or on a server that stopped answering: under a daily timer
# the backups would stop with nothing in the log. An hour is far beyond what the bot's database
# needs (a dump writes tens of MB a second) and within articlebot-backup.service's bound.
PG_DUMP_TIMEOUT_S = 3600


def backup(data_dir: Path, dest: Path) -> CopyResult:
    """A consistent copy of the data folder at `dest` (a new or empty folder)."""
    started = time.perf_counter()
    folder = DataFolder(data_dir)
    if not is_database(folder.store):
        raise BadInput(
            f"{shown(data_dir)} holds no articlebot data to back up; give the bot's data folder "
            "with --data-dir (or ARTICLEBOT_DATA_DIR)."
        )
    if dest.resolve().is_relative_to(data_dir.resolve()):
        raise BadInput(
            f"{shown(dest)} is inside the data folder {shown(data_dir)}; give a folder outside "
            "it for the backup (on another disk, ideally)."
        )
    with staged(dest, "backup") as staging:
        for path in folder.databases():  # the store, conversations.db, settings.db
            if path.is_file() and is_database(path):
                copy_database(path, staging / path.name)
        _copy_indexes(folder, DataFolder(staging))
        counts = collection_counts(staging / STORE)
        Manifest(
            kind="data folder",
            release=version(),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            collections=counts,
            files={
                p.relative_to(staging).as_posix(): FileEntry(p.stat().st_size, sha256(p))
                for p in sorted(staging.rglob("*"))
                if p.is_file()
            },
            schema_version=schema_version(staging / STORE),
            tables={
                p.name: table_counts(p) for p in sorted(staging.glob("*.db")) if p.name != STORE
            },
            source=str(data_dir.resolve()),
        ).write(staging)
    return CopyResult(
        "backup",
        dest,
        articles=sum(a for a, _ in counts.values()),
        passages=sum(p for _, p in counts.values()),
        bytes=folder_size(dest),
        collections=len(counts),
        seconds=time.perf_counter() - started,
    )


def _copy_indexes(source: DataFolder, target: DataFolder) -> None:
    if not source.indexes.is_dir():
        return
    target.indexes.mkdir(mode=0o700)
    for faiss_file in sorted(source.indexes.glob("*.faiss")):
        # Under the lock every save of this collection's index takes: the FAISS file and its
        # sidecar (model, dimension, count) are copied as one pair, never from two saves.
        with file_lock(faiss_file.with_suffix(".lock")):
            for path in index_files(faiss_file):
                if path.is_file() and not path.is_symlink():
                    shutil.copyfile(path, target.indexes / path.name)
                    os.chmod(target.indexes / path.name, 0o600)


def pg_dump_call(pg_dump: str, url: str, dump: Path) -> tuple[list[str], dict[str, str]]:
    """pg_dump's arguments and environment: the password, whether written `user:pass@` or as
    `?password=`, goes in PGPASSWORD (which only the user's own processes can read), never on
    a command line that `ps` shows every user of the machine."""
    try:
        parts = urllib.parse.urlsplit(url)
        password = parts.password
    except ValueError:
        raise BadInput(
            f"ARTICLEBOT_DATABASE_URL is not a URL pg_dump can read ({without_passwords(url)}); "
            "fix it in .env."
        ) from None
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    passwords = [v for k, v in query if k == "password"]
    env = dict(os.environ)
    if password or passwords:
        env["PGPASSWORD"] = urllib.parse.unquote(password) if password else passwords[-1]
    host = parts.netloc.rpartition("@")[2]
    user = parts.username
    netloc = f"{user}@{host}" if user else host
    kept = urllib.parse.urlencode([(k, v) for k, v in query if k != "password"])
    clean = urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=kept))
    return [pg_dump, "--format=custom", f"--file={dump}", f"--dbname={clean}"], env


def backup_postgres(
    url: str,
    dest: Path,
    counts: Callable[[], dict[str, tuple[int, int]]],
    timeout_s: float = PG_DUMP_TIMEOUT_S,
) -> CopyResult:
    """`pg_dump` of the database into `dest`, when PostgreSQL's client tools are installed;
    stopped, and the backup refused, when it runs past `timeout_s`."""
    started = time.perf_counter()
    pg_dump = shutil.which("pg_dump")
    if pg_dump is None:
        raise BadInput(
            "The articles are in PostgreSQL and pg_dump is not installed here, so back up the "
            "database where it is: `pg_dump --format=custom --file articlebot.pgdump "
            "postgresql://...` (or with your host's backups)."
        )
    before = counts()
    with staged(dest, "backup") as staging:
        dump = staging / PG_DUMP_FILE
        argv, env = pg_dump_call(pg_dump, url, dump)
        try:
            done = subprocess.run(
                argv, env=env, capture_output=True, text=True, check=False, timeout=timeout_s
            )
        except subprocess.TimeoutExpired:  # pg_dump is killed; `staged` removes its file
            raise StorageError(
                f"pg_dump did not finish within {timeout_s:g} s and was stopped, so the "
                "database was not backed up (a lock another transaction holds, or a server "
                "that stopped answering); check the database, or give more time with "
                "--timeout."
            ) from None
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no reason given"])[-1]
            raise StorageError(
                f"pg_dump could not back up the database ({shown(without_passwords(reason))})."
            )
        os.chmod(dump, 0o600)
        Manifest(
            kind="postgresql",
            release=version(),
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            collections=before,
            files={PG_DUMP_FILE: FileEntry(dump.stat().st_size, sha256(dump))},
        ).write(staging)
    return CopyResult(
        "backup",
        dest,
        articles=sum(a for a, _ in before.values()),
        passages=sum(p for _, p in before.values()),
        bytes=folder_size(dest),
        collections=len(before),
        seconds=time.perf_counter() - started,
    )
