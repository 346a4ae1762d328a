"""`articlebot add`: articles from files, URLs or standard input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from index.cli.arguments import Subcommands
from index.cli.inputs import is_url, read_stdin
from index.cli.output import clean, print_json, progress_bar
from index.errors import ArticlebotError, BadInput
from index.ingest.readers import read_path, read_text, read_url
from index.library import Library
from index.records import AddResult, Document


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
        for item, result in zip(args.inputs, results, strict=True):
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


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("add", parents=[common], help="add articles from files, URLs or stdin")
    p.add_argument(
        "inputs", nargs="+", metavar="PATH_OR_URL", help="a .txt/.md/.html/.pdf file, a URL, or -"
    )
    p.add_argument("--title", help="use this title instead of the article's own")
    p.set_defaults(func=cmd_add)
