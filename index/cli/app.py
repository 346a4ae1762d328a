"""The parser of every command, and `main`: the library it opens, the errors it translates."""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from index.cli import (
    add,
    articles,
    ask,
    backup,
    bench,
    chat,
    evaluate,
    feed,
    feedback,
    maintenance,
    restore,
    summaries,
)
from index.cli.arguments import common_options
from index.cli.output import clean
from index.errors import ArticlebotError, shown
from index.library import Library
from index.logs import Redactor, configure_logging, redacting_excepthook
from index.settings import Settings, load_dotenv, secrets_in_env
from index.storage.sqlite_file import disk_full
from index.version import version


def build_parser() -> argparse.ArgumentParser:
    common = common_options()

    parser = argparse.ArgumentParser(
        prog="articlebot",
        description="Answer questions about your articles, citing the paragraph of each answer.",
    )
    parser.add_argument("--version", action="version", version=f"articlebot {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    # In this order in `articlebot --help`.
    add.register(sub, common)
    ask.register(sub, common)
    articles.register(sub, common)  # list, remove, show, refresh
    summaries.register(sub, common)  # summary, digest
    feed.register(sub, common)
    maintenance.register(sub, common)  # rebuild, stats, migrate
    backup.register(sub)
    restore.register(sub)
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
        if getattr(args, "without_library", False):
            # backup and restore read and write the folder's files themselves: opening a
            # library first would create the very folder that restore needs empty.
            load_dotenv()
            sys.excepthook = redacting_excepthook(Redactor(secrets_in_env()))
            return int(args.func(args, Settings.from_env()))
        if library is not None:
            return int(args.func(args, library))
        load_dotenv()
        sys.excepthook = redacting_excepthook(Redactor(secrets_in_env()))
        settings = Settings.from_env()
        # Warnings go to standard error as before (the message alone), now without secrets;
        # ARTICLEBOT_LOG_LEVEL=info adds a line per question and per add.
        configure_logging(
            log_format=settings.log_format,
            secrets=settings.secrets,
            content=settings.log_content,
            level=settings.log_level,
            text_format="%(message)s",
        )
        library = settings.library(args.data_dir)
        try:
            return int(args.func(args, library))
        finally:
            library.close()
    except ArticlebotError as exc:
        print(_one_line(f"error: {exc}"), file=sys.stderr)
        return 1
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        # A write outside the store's own (the model's export, a temporary file): one sentence
        # as the store's full disk has, not a traceback.
        message = (
            str(disk_full(Path(exc.filename).parent))
            if exc.filename
            else "A disk this command writes to (the data folder's or the temporary folder's) "
            "is full; free some space there and try again."
        )
        print(_one_line(f"error: {message}"), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`articlebot list | head`): stop quietly, as other tools do, and
        # point stdout at /dev/null so that the flush at exit does not raise again.
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _one_line(message: str) -> str:
    """An error as the terminal shows it: no password (the database URL's, however written, as
    libpq's own messages repeat it), and no control character a terminal would obey."""
    return shown(Redactor(secrets_in_env())(clean(message)), limit=4_000)
