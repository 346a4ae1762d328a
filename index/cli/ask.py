"""`articlebot ask`: one question, or JSON lines of them with --batch."""

from __future__ import annotations

import argparse
import json

from index.cli.arguments import Subcommands, positive
from index.cli.inputs import open_text, stdin_lines
from index.cli.output import clean, print_json, render_answer
from index.errors import ArticlebotError, BadInput
from index.library import Library


def cmd_ask(args: argparse.Namespace, library: Library) -> int:
    if args.batch:
        return _ask_batch(args, library)
    if not args.question:
        raise BadInput('Give a question, e.g. articlebot ask "Who announced the lawsuits?".')
    answer = library.collection(args.collection).ask(args.question, top_k=args.top_k)
    if args.json:
        print_json(answer.to_json())
    else:
        print(render_answer(answer))
    return 0


def _ask_batch(args: argparse.Namespace, library: Library) -> int:
    """JSON lines in, one JSON answer per line out; the model is loaded once for all."""
    stream = stdin_lines() if args.batch == "-" else open_text(args.batch)
    failed = 0
    with stream:
        for number, line in enumerate(stream, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if not isinstance(item, dict) or not isinstance(item.get("question"), str):
                    raise BadInput(f'Line {number} needs a "question" string.')
                name = clean(str(item.get("collection") or args.collection))
                answer = library.collection(name).ask(item["question"], top_k=args.top_k)
                print_json(answer.to_json())
            except (ArticlebotError, json.JSONDecodeError) as exc:
                failed += 1
                message = str(exc) if isinstance(exc, ArticlebotError) else f"line {number}: {exc}"
                print_json({"question": None, "error": message, "line": number})
    return 1 if failed else 0


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ask", parents=[common], help="ask a question; get a cited answer")
    p.add_argument("question", nargs="?", help="the question, in quotes")
    p.add_argument("--top-k", type=positive, default=5, help="passages to consider (1-50)")
    p.add_argument(
        "--batch", metavar="FILE", help='JSON lines of {"question", "collection"}, or - for stdin'
    )
    p.set_defaults(func=cmd_ask)
