"""`articlebot backup DEST`: a consistent copy of the data folder (or a `pg_dump` of the
database) while the bot runs and writes.

SIGTERM (systemd's stop and its start timeout, `docker stop`, a plain `kill`) ends a backup as
a failure does: what it had written is removed on the way out, and it says so in one line.
Python's own SIGTERM ends the process at once and leaves a whole copy of the data folder
behind, and its lock files.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from index.cli.arguments import Subcommands, count
from index.cli.output import print_json
from index.ops.backup import PG_DUMP_TIMEOUT_S, CopyResult, backup, backup_postgres
from index.ops.backup_record import write_record
from index.ops.retention import Rotation, rotate
from index.settings import Settings

# The exit status of a backup stopped by SIGTERM, as a shell reports a process it ended.
STOPPED = 128 + signal.SIGTERM


class Stopped(BaseException):
    """SIGTERM during a backup, raised where the backup is, so that the cleanup on its way out
    (the staging folder, the lock files) runs; not an Exception, so that no handler of errors
    on the way takes it for one."""


@contextlib.contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM raises Stopped in the block, once: a second one must not cut the cleanup short."""

    def stop(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Stopped

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (a harness running main in one): left as it is
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_backup(args: argparse.Namespace, settings: Settings) -> int:
    data_dir = Path(args.data_dir or settings.data_dir)
    try:
        with stopped_by_sigterm():
            made = _backup(args, settings)
    except Stopped:
        _record(data_dir, error="stopped (SIGTERM) before it was finished")
        print(
            "error: The backup was stopped (SIGTERM) before it was finished; what it had "
            "written is removed, and the backups before it are kept.",
            file=sys.stderr,
        )
        return STOPPED
    except Exception as exc:
        _record(data_dir, error=str(exc) or type(exc).__name__)
        raise
    _record(data_dir, folder=made)
    return 0


def _record(data_dir: Path, *, folder: Path | None = None, error: str | None = None) -> None:
    """What this run did, for the bot's /metrics (ops/backup_record.py); a data folder that
    is not there (a database-only setup) or cannot be written keeps none, said in one line."""
    if not data_dir.is_dir():
        return
    try:
        write_record(data_dir, folder=folder, error=error)
    except OSError as exc:
        print(
            f"warning: Cannot note the backup in {data_dir} ({exc.strerror or exc}); /metrics "
            "will not show it.",
            file=sys.stderr,
        )


def _backup(args: argparse.Namespace, settings: Settings) -> Path:
    """The backup written (DEST, or the dated one inside it with --keep)."""

    def make(dest: Path) -> CopyResult:
        if settings.database_url:
            url = settings.database_url

            def counts() -> dict[str, tuple[int, int]]:
                with contextlib.closing(settings.library(args.data_dir)) as library:
                    store = library.store
                    return {name: store.count(name) for name in store.collection_names()}

            return backup_postgres(url, dest, counts, timeout_s=args.timeout)
        return backup(args.data_dir or settings.data_dir, dest)

    if args.keep is None:
        result = make(args.dest)
        if args.json:
            print_json(result.to_json())
        else:
            print(render_backup(result))
        return result.folder
    rotation = rotate(args.dest, args.keep, make)
    if args.json:
        print_json(
            rotation.made.to_json()
            | {"removed": [str(p) for p in rotation.removed], "kept": len(rotation.kept)}
        )
    else:
        print(render_rotation(rotation))
    return rotation.made.folder


def render_rotation(rotation: Rotation) -> str:
    removed = len(rotation.removed)
    return (
        f"{render_backup(rotation.made)} {len(rotation.kept)} backup"
        f"{'s' if len(rotation.kept) != 1 else ''} kept in {rotation.made.folder.parent}"
        + (f", {removed} older removed." if removed else ".")
    )


def render_backup(result: CopyResult) -> str:
    return (
        f"Backed up {result.articles:,} articles ({result.passages:,} passages) of "
        f"{result.collections} collection{'s' if result.collections != 1 else ''} to "
        f"{result.folder}: {result.bytes / 1e6:.1f} MB in {result.seconds:.1f} s; "
        f"`articlebot restore {result.folder} --data-dir NEW_FOLDER` puts it back."
    )


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "backup",
        help="copy the data folder (or pg_dump the database) while the bot runs",
        description="Copy the data folder into DEST, a new or empty folder, while the bot and "
        "other commands go on reading and writing; with ARTICLEBOT_DATABASE_URL, run pg_dump. "
        "With --keep N, DEST holds dated backups (articlebot-YYYYMMDDTHHMMSSZ): a new one is "
        "written and the oldest beyond N are removed.",
    )
    p.add_argument(
        "dest",
        type=Path,
        metavar="DEST",
        help="a new or empty folder for the backup; with --keep, the folder that holds them",
    )
    p.add_argument(
        "--keep",
        type=count,
        metavar="N",
        help="write a new dated backup inside DEST and remove the oldest beyond N (only "
        "backups this command made there)",
    )
    p.add_argument(
        "--timeout",
        type=count,
        metavar="SECONDS",
        default=PG_DUMP_TIMEOUT_S,
        help="with PostgreSQL, the longest pg_dump may run before it is stopped and the backup "
        f"fails (default: {PG_DUMP_TIMEOUT_S})",
    )
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_backup, without_library=True)
