"""The parser of every command, and `main`: the library it opens, the errors it translates."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence

from index.cli import add, articles, ask, bench, chat, evaluate, feed, feedback, maintenance
from index.cli.arguments import common_options
from index.cli.output import clean
from index.errors import ArticlebotError
from index.library import Library
from index.settings import Settings, load_dotenv


def build_parser() -> argparse.ArgumentParser:
    common = common_options()

    parser = argparse.ArgumentParser(
        prog="articlebot",
        description="Answer questions about your articles, citing the paragraph of each answer.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # In this order in `articlebot --help`.
    add.register(sub, common)
    ask.register(sub, common)
    articles.register(sub, common)  # list, remove, show, refresh
    feed.register(sub, common)
    maintenance.register(sub, common)  # rebuild, stats, migrate
    feedback.register(sub, common)
    chat.register(sub, common)
    bench.register(sub, common)
    evaluate.register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None, library: Library | None = None) -> int:
    """Run one command; `library` lets a test harness reuse an open library and its model."""
    parser = build_parser()
    args = parser.parse_args(argv)
    for name in ("question", "title", "collection"):  # text, unlike paths, must be valid Unicode
        if isinstance(getattr(args, name, None), str):
            setattr(args, name, clean(getattr(args, name)))
    try:
        if library is not None:
            return int(args.func(args, library))
        load_dotenv()
        settings = Settings.from_env()
        library = settings.library(args.data_dir)
        try:
            return int(args.func(args, library))
        finally:
            library.close()
    except ArticlebotError as exc:
        print(clean(f"error: {exc}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`articlebot list | head`): stop quietly, as other tools do, and
        # point stdout at /dev/null so that the flush at exit does not raise again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
