"""`articlebot restore SRC`: a backup put back into a new or empty data folder, and checked."""

from __future__ import annotations

import argparse
from pathlib import Path

from index.cli.arguments import Subcommands
from index.cli.output import print_json
from index.ops.restore import restore
from index.settings import Settings


def cmd_restore(args: argparse.Namespace, settings: Settings) -> int:
    result = restore(args.source, args.data_dir or settings.data_dir)
    if args.json:
        print_json(result.to_json())
    else:
        print(
            f"Restored {result.articles:,} articles ({result.passages:,} passages) of "
            f"{result.collections} collection{'s' if result.collections != 1 else ''} into "
            f"{result.folder} in {result.seconds:.1f} s: every database passed SQLite's "
            "integrity check, the counts agree with the backup, and the indexes were built "
            "again from the restored articles."
        )
    return 0


def register(sub: Subcommands) -> None:
    p = sub.add_parser(
        "restore",
        help="put a backup back into a new or empty data folder",
        description="Restore a folder written by `articlebot backup` into --data-dir, which "
        "must be new or empty, then check it (integrity, counts, indexes).",
    )
    p.add_argument("source", type=Path, metavar="SRC", help="a folder `articlebot backup` wrote")
    p.add_argument(
        "--data-dir",
        type=Path,
        help="data folder to restore into (default: $ARTICLEBOT_DATA_DIR or ./data)",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_restore, without_library=True)
