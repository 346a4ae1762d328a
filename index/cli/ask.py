"""`articlebot ask`: one question, or JSON lines of them with --batch."""

from __future__ import annotations

import argparse
import json
import logging
import time

from index.cli.arguments import Subcommands, article_id, positive
from index.cli.inputs import open_text, stdin_lines
from index.cli.output import clean, print_json, reader_locale, render_answer
from index.errors import ArticlebotError, BadInput, StorageError
from index.library import Library
from index.logs import log_event
from index.messages import in_locale
from index.records import Answer
from index.writer import fallback, write_answer

log = logging.getLogger("index.activity")


def cmd_ask(args: argparse.Namespace, library: Library) -> int:
    if args.batch:
        return _ask_batch(args, library)
    if not args.question:
        raise BadInput('Give a question, e.g. articlebot ask "Who announced the lawsuits?".')
    answer = _ask(library, args.collection, args.question, args.top_k, args.article, args.no_writer)
    if args.json:
        print_json(answer.to_json())
    else:
        print(render_answer(answer, reader_locale(args.question)))
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
                article = item.get("article", args.article)
                if article is not None and (
                    not isinstance(article, int) or isinstance(article, bool) or article < 1
                ):
                    raise BadInput(f'Line {number}: "article" is an article id, as `list` shows.')
                answer = _ask(library, name, item["question"], args.top_k, article, args.no_writer)
                print_json(answer.to_json())
            except (ArticlebotError, json.JSONDecodeError) as exc:
                failed += 1
                message = str(exc) if isinstance(exc, ArticlebotError) else f"line {number}: {exc}"
                print_json({"question": None, "error": message, "line": number})
    return 1 if failed else 0


def _ask(
    library: Library,
    name: str,
    question: str,
    top_k: int,
    article: int | None = None,
    no_writer: bool = False,
) -> Answer:
    """One question, with its log line (outcome and time; the text only if logs may show it);
    of one article, if `article` is given; worded by the writer where one is configured and
    what it wrote passed the checks (index/writer), unless `no_writer`."""
    started = time.perf_counter()
    fields: dict[str, object] = {"via": "cli", "collection": name}
    try:
        collection = library.collection(name)
        if article is not None:
            collection.get(article)  # one sentence that says which ids there are
        scope = None if article is None else {article}
        answer = collection.ask(question, top_k=top_k, article_ids=scope)
        if no_writer and library.writer is not None:
            written = fallback(answer, "turned off (--no-writer)", "off")
        else:
            written = write_answer(answer, library.writer, collection.embedder())
        answer = in_locale(written.answer, reader_locale(question))
    except Exception as exc:
        outcome = (
            "failed"
            if not isinstance(exc, ArticlebotError) or isinstance(exc, StorageError)
            else "refused"
        )
        fields.update(error=type(exc).__name__)
        _question_line(outcome, fields, started, question)
        raise
    fields.update(citations=len(answer.citations), writer=written.kind)
    _question_line("declined" if answer.abstained else "answered", fields, started, question)
    return answer


def _question_line(outcome: str, fields: dict[str, object], started: float, text: str) -> None:
    seconds = round(time.perf_counter() - started, 3)
    log_event(
        log,
        "question",
        {"outcome": outcome, **fields, "seconds": seconds},
        content={"question": text},
    )


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("ask", parents=[common], help="ask a question; get a cited answer")
    p.add_argument("question", nargs="?", help="the question, in quotes")
    p.add_argument("--top-k", type=positive, default=5, help="passages to consider (1-50)")
    p.add_argument(
        "--batch", metavar="FILE", help='JSON lines of {"question", "collection"}, or - for stdin'
    )
    p.add_argument(
        "--article",
        type=article_id,
        metavar="ID",
        help="ask this article only (an overview question gets its summary)",
    )
    p.add_argument(
        "--no-writer",
        action="store_true",
        help="answer with the articles' own sentences, without the configured writer",
    )
    p.set_defaults(func=cmd_ask)
