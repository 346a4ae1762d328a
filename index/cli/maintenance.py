"""`articlebot rebuild`, `stats` and `migrate`: the index and the storage behind it."""

from __future__ import annotations

import argparse
from pathlib import Path

from index.cli.arguments import Subcommands
from index.cli.output import print_json, progress_bar
from index.errors import BadInput
from index.library import Library


def cmd_rebuild(args: argparse.Namespace, library: Library) -> int:
    with progress_bar(not args.json) as progress:
        result = library.collection(args.collection).rebuild(
            reembed=args.reembed, progress=progress
        )
    if args.json:
        print_json(result.to_json())
    else:
        verb = "Re-embedded and rebuilt" if result.reembedded else "Rebuilt"
        print(f"{verb} the index: {result.passages} passages in {result.seconds:.1f} s.")
    return 0


def cmd_stats(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    stats = collection.stats()
    if args.json:
        # The counts the bot's /metrics shows, for the command line: the whole store's, and
        # this collection's feeds.
        totals = library.totals()
        print_json(
            {
                **stats.to_json(),
                "feeds": len(library.store.list_feeds(collection.name)),
                "collections": totals.collections,
                "total_articles": totals.articles,
                "total_passages": totals.passages,
                "index_memory_bytes": totals.index_memory_bytes,
            }
        )
    else:
        print(
            f"{stats.collection}: {stats.articles} articles, {stats.passages} passages, "
            f"{stats.indexed} indexed ({stats.index_type}, {stats.index_bytes / 1e6:.1f} MB), "
            f"model {stats.model}"
        )
    return 0


def cmd_migrate(args: argparse.Namespace, library: Library) -> int:
    from index.ops.migrate import migrate
    from index.storage.postgres import PgStore, redact

    if not args.to.startswith(("postgresql://", "postgres://")):
        raise BadInput("Give the database as a postgresql:// URL, e.g. --to postgresql://host/db.")
    # The source is always the data folder, whatever ARTICLEBOT_DATABASE_URL says.
    source = library.folder_store()
    if not source.collection_names():
        raise BadInput(
            f"The data folder {library.data_dir} holds no articles to copy; give the folder "
            "the bot has used with --data-dir (or ARTICLEBOT_DATA_DIR)."
        )
    target = PgStore(args.to, library.embedder_dim())
    try:
        with progress_bar(not args.json) as progress:
            names = [args.collection] if args.collection else None
            result = migrate(source, target, names, progress)
    finally:
        target.close()
        if source is not library.store:
            source.close()
    if args.json:
        print_json(result.to_json())
    else:
        print(
            f"Copied {result.articles} articles ({result.passages} passages) and "
            f"{result.feeds} feeds of {result.collections} collections to {redact(args.to)}, "
            f"with {result.server_rows} settings, conversation turns and votes; "
            f"{result.already_present} articles were already there."
        )
    return 0


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("rebuild", parents=[common], help="rebuild the search index from storage")
    p.add_argument(
        "--reembed", action="store_true", help="embed every passage again (after a model change)"
    )
    p.set_defaults(func=cmd_rebuild)

    p = sub.add_parser("stats", parents=[common], help="count articles, passages and vectors")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "migrate",
        help="copy the data folder's collections into PostgreSQL, without embedding again",
    )
    p.add_argument("--to", required=True, metavar="URL", help="postgresql://user@host/database")
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument("--collection", help="only this collection (default: all of them)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_migrate)
