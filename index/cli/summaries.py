"""`articlebot summary` and `articlebot digest`: what articles are about, in their own words."""

from __future__ import annotations

import argparse
import re

from index.cli.arguments import Subcommands, article_id
from index.cli.output import print_json
from index.collection import Collection
from index.errors import BadInput
from index.library import Library
from index.records import Summary
from index.writer import NOT_CONFIGURED, write_summary


def _sentences(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a whole number") from None
    if not 1 <= number <= 10:
        raise argparse.ArgumentTypeError("choose a number of sentences from 1 to 10")
    return number


def _days(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of days") from None
    if not 0 < number <= 3660:
        raise argparse.ArgumentTypeError("choose a number of days from 1 to 3660")
    return number


def cmd_summary(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    if args.all == bool(args.ids):
        raise BadInput("Name the articles to summarise by id (see `articlebot list`), or --all.")
    ids = [a.id for a in reversed(collection.articles())] if args.all else args.ids
    for number in ids:
        summary = collection.summary(number, sentences=args.sentences)
        written, why_not = _written(library, collection, summary, args)
        if args.json:
            shown = summary.to_json()
            if library.writer is not None:
                # As `ask --json` says it; without a writer the object is as it always was.
                model = library.writer.model if written else None
                shown.update(summary=written or summary.text, written_by=model)
                shown.update(writer_fallback=why_not)
            print_json(shown)
        else:
            print(_shown(summary, written, library.writer.model if library.writer else None))
    return 0


def _written(
    library: Library, collection: Collection, summary: Summary, args: argparse.Namespace
) -> tuple[str | None, str | None]:
    """(the summary in the writer's words, each source as `(¶n)`, when every check passed;
    why not, else), as `ask` words an answer (index/writer)."""
    if library.writer is None:
        return None, NOT_CONFIGURED
    if args.no_writer:
        return None, "turned off (--no-writer)"
    if args.sentences is not None:
        return None, "turned off (--sentences asks for the article's own sentences)"
    answer = collection.summary_answer(summary.article.id)
    written = write_summary(answer, summary.article.language, library.writer, collection.embedder())
    if not written.written:
        return None, written.answer.writer_fallback
    paragraphs = {c.n: c.paragraph for c in written.answer.citations}

    def paragraph(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"(¶{paragraphs[n]})" if n in paragraphs else match.group(0)

    return _MARKER.sub(paragraph, written.answer.answer), None


_MARKER = re.compile(r"\[(\d+)\]")


def _shown(summary: Summary, written: str | None = None, model: str | None = None) -> str:
    article = summary.article
    lines = [f"#{article.id} {article.title}"]
    if written:
        # The model's words first; the article's own sentences under them, for checking.
        lines += [f"  {written}", f"  Written by {model}, from the article's sentences:"]
    lines += [f"  {s.text} (¶{s.paragraph})" for s in summary.sentences]
    return "\n".join(lines) + "\n"


def cmd_digest(args: argparse.Namespace, library: Library) -> int:
    summaries = library.collection(args.collection).digest(args.days)
    if args.json:
        print_json(
            {
                "articles": [
                    {
                        "article_id": s.article.id,
                        "title": s.article.title,
                        "url": s.article.url,
                        "added": s.article.added_at,
                        "summary": s.line,
                    }
                    for s in summaries
                ]
            }
        )
        return 0
    if not summaries:
        print(f"No articles were added in the last {args.days:g} days.")
    for s in summaries:
        where = f"\n    {s.article.url}" if s.article.url else ""
        print(f"#{s.article.id} {s.article.title} (added {s.article.added_at[:10]}){where}")
        print(f"    {s.line}\n")
    return 0


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "summary", parents=[common], help="what articles are about, in their own sentences"
    )
    p.add_argument("ids", nargs="*", type=article_id, metavar="ID", help="the articles' ids")
    p.add_argument("--all", action="store_true", help="every article of the collection")
    p.add_argument(
        "--sentences", type=_sentences, help="this many sentences (1-10) instead of the stored"
    )
    p.add_argument(
        "--no-writer",
        action="store_true",
        help="the article's own sentences, without the configured writer (ARTICLEBOT_LLM_*)",
    )
    p.set_defaults(func=cmd_summary)
    p = sub.add_parser(
        "digest", parents=[common], help="the articles added lately, each with its summary"
    )
    p.add_argument(
        "--days", type=_days, default=7.0, help="added in the last this many days (default 7)"
    )
    p.set_defaults(func=cmd_digest)
