"""`articlebot add`: articles from files, URLs or standard input."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable

from index.cli.arguments import Subcommands
from index.cli.inputs import is_url, read_stdin
from index.cli.output import clean, print_json, progress_bar
from index.errors import ArticlebotError, BadInput, StorageError
from index.ingest.readers import read_path, read_text, read_url
from index.library import Library
from index.logs import log_event
from index.records import AddResult, Document

log = logging.getLogger("index.activity")


def render_added(result: AddResult) -> str:
    a = result.article
    where = f" ({a.site})" if a.site else ""
    if result.near_duplicate:
        return (
            f"Already there as nearly the same text: “{a.title}”{where}, id {a.id}; nothing "
            "changed (`articlebot refresh ID` fetches a new version of a stored link)."
        )
    if not result.added:
        return f"Already there: “{a.title}”{where}, id {a.id}; nothing changed."
    skipped = len(result.skipped)
    return (
        f"Added “{a.title}”{where} as id {a.id}: {a.paragraphs} paragraphs indexed"
        f" ({a.passages} passages), {skipped} line{'s' if skipped != 1 else ''} skipped"
        " as not part of the article."
    )


def cmd_add(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    if args.title and len(args.inputs) > 1:
        raise BadInput("--title applies to one article; add the files one at a time.")

    def reader(item: str) -> Callable[[], Document]:
        if item == "-":
            return lambda: read_text(
                read_stdin(library.limits.max_file_bytes),
                title=args.title,
                source="stdin",
                limits=library.limits,
            )
        if is_url(item):
            return lambda: read_url(clean(item), title=args.title, limits=library.limits)
        return lambda: read_path(item, title=args.title, limits=library.limits)

    failed = 0
    with progress_bar(not args.json) as progress:
        readers = (reader(item) for item in args.inputs)
        results = collection.add_many(readers, progress=progress)
        started = time.perf_counter()
        for item, result in zip(args.inputs, results, strict=True):
            _log_add(result, collection.name, started)
            started = time.perf_counter()
            if isinstance(result, ArticlebotError):
                failed += 1
                if args.json:
                    print_json({"input": item, "error": str(result)})
                else:
                    print(clean(f"error: {item}: {result}"), file=sys.stderr)
            elif args.json:
                print_json({"input": item, **result.to_json()})
            else:
                print(render_added(result))
    return 1 if failed else 0


def _log_add(result: AddResult | ArticlebotError, collection: str, started: float) -> None:
    """One line an add: its outcome and time (the title and link only if logs may show them)."""
    fields: dict[str, object] = {"source": "cli", "collection": collection}
    content = None
    if isinstance(result, ArticlebotError):
        refused = not isinstance(result, StorageError)
        fields.update(outcome="refused" if refused else "failed", reason=type(result).__name__)
    else:
        fields.update(
            outcome="added" if result.added else "already_present",
            article=result.article.id,
            passages=result.article.passages if result.added else None,
        )
        content = {"title": result.article.title, "url": result.article.url}
    fields["seconds"] = round(time.perf_counter() - started, 3)
    log_event(log, "add", fields, content=content)


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("add", parents=[common], help="add articles from files, URLs or stdin")
    p.add_argument(
        "inputs", nargs="+", metavar="PATH_OR_URL", help="a .txt/.md/.html/.pdf file, a URL, or -"
    )
    p.add_argument("--title", help="use this title instead of the article's own")
    p.set_defaults(func=cmd_add)
