"""`articlebot summary` and `articlebot digest`: what articles are about, in their own words."""

from __future__ import annotations

import argparse

from index.cli.arguments import Subcommands, article_id
from index.cli.output import print_json
from index.errors import BadInput
from index.library import Library
from index.records import Summary


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
        if args.json:
            print_json(summary.to_json())
        else:
            print(_shown(summary))
    return 0


def _shown(summary: Summary) -> str:
    article = summary.article
    lines = [f"#{article.id} {article.title}"]
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
    p.set_defaults(func=cmd_summary)
    p = sub.add_parser(
        "digest", parents=[common], help="the articles added lately, each with its summary"
    )
    p.add_argument(
        "--days", type=_days, default=7.0, help="added in the last this many days (default 7)"
    )
    p.set_defaults(func=cmd_digest)
