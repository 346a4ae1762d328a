"""`articlebot list`, `remove`, `show` and `refresh`: the stored articles, one by one."""

from __future__ import annotations

import argparse

from index.cli.arguments import Subcommands, article_id
from index.cli.output import print_json, progress_bar
from index.library import Library
from index.storage.sqlite_store import Passage


def cmd_list(args: argparse.Namespace, library: Library) -> int:
    articles = library.collection(args.collection).articles()
    if args.json:
        print_json([a.to_json() for a in articles])
        return 0
    if not articles:
        print("No articles yet; add one with `articlebot add FILE_OR_URL`.")
    for a in articles:
        where = f" ({a.site})" if a.site else ""
        print(f"{a.id:>5}  {a.title}{where}  {a.paragraphs} ¶, added {a.added_at[:10]}")
    return 0


def cmd_remove(args: argparse.Namespace, library: Library) -> int:
    article = library.collection(args.collection).remove(args.id)
    if args.json:
        print_json({"removed": article.to_json()})
    else:
        print(f"Removed “{article.title}” (id {article.id}).")
    return 0


def cmd_show(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    article = collection.get(args.id)
    passages = collection.passages_of(args.id)
    if args.json:
        print_json(
            {
                "article_id": article.id,
                "title": article.title,
                "site": article.site,
                "author": article.author,
                "published": article.published,
                "url": article.url,
                "language": article.language,
                "passages": [_passage_json(p) for p in passages],
            }
        )
        return 0
    print(article.title)
    about = [x for x in (article.site, article.author, article.published, article.url) if x]
    if about:
        print(" · ".join(about))
    heading = None
    for passage in passages:
        if passage.heading and passage.heading != heading:
            print(f"\n## {passage.heading}")
        heading = passage.heading
        print(f"\n¶{passage.paragraph}  {passage.text}")
    return 0


def _passage_json(passage: Passage) -> dict[str, object]:
    shown: dict[str, object] = {"paragraph": passage.paragraph, "text": passage.text}
    if passage.heading:
        shown["heading"] = passage.heading
    return shown


def cmd_refresh(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    with progress_bar(not args.json) as progress:
        result = collection.refresh(args.id, progress=progress)
    if args.json:
        print_json({**result.to_json(), "refreshed": args.id, "changed": result.added})
    elif result.added:
        print(f"Updated “{result.article.title}”: it is now article {result.article.id}.")
    else:
        print(f"“{result.article.title}” has not changed since it was added.")
    return 0


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("list", parents=[common], help="list the collection's articles")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("remove", parents=[common], help="remove an article by its id")
    p.add_argument("id", type=article_id, help="the article's id, as `list` shows it")
    p.set_defaults(func=cmd_remove)

    p = sub.add_parser("show", parents=[common], help="show a stored article and its paragraphs")
    p.add_argument("id", type=article_id, help="the article's id, as `list` shows it")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("refresh", parents=[common], help="fetch an article's page again")
    p.add_argument("id", type=article_id, help="the article's id, as `list` shows it")
    p.set_defaults(func=cmd_refresh)
