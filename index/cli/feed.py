"""`articlebot feed add|list|remove|poll`: news feeds whose new articles are added."""

from __future__ import annotations

import argparse
import sys

from index.cli.arguments import Subcommands, article_id
from index.cli.output import print_json
from index.library import Library


def cmd_feed(args: argparse.Namespace, library: Library) -> int:
    import index.ingest.feed_polling as subs

    collection = library.collection(args.collection)
    if args.feed_command == "add":
        feed, added = subs.add_feed(collection, args.url)
        if args.json:
            print_json({**feed.to_json(), "added": added})
        else:
            state = "Following" if added else "Already following"
            print(f"{state} {feed.title or feed.url} (feed {feed.id}); `feed poll` adds its news.")
    elif args.feed_command == "list":
        feeds = subs.list_feeds(collection)
        if args.json:
            print_json([f.to_json() for f in feeds])
            return 0
        if not feeds:
            print("No feeds yet; follow one with `articlebot feed add URL`.")
        for f in feeds:
            checked = f"checked {f.checked_at[:16]}" if f.checked_at else "not checked yet"
            print(f"{f.id:>5}  {f.title or f.url}  {f.url}  ({checked})")
    elif args.feed_command == "remove":
        feed = subs.remove_feed(collection, args.id)
        if args.json:
            print_json({"removed": feed.to_json()})
        else:
            print(f"No longer following {feed.title or feed.url}; its articles stay.")
    else:
        result = subs.poll_feeds(collection)
        if args.json:
            print_json(result.to_json())
        else:
            print(
                f"Checked {result.checked} of {result.feeds} feeds: added {result.added} "
                f"articles, {result.failed} failed."
            )
            for error in result.errors:
                print(f"  {error}", file=sys.stderr)
        return 1 if result.failed and not result.checked else 0
    return 0


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("feed", help="follow news feeds whose new articles are added when polled")
    feeds = p.add_subparsers(
        dest="feed_command", metavar="FEED_COMMAND", required=True, help="add, list, remove or poll"
    )
    f = feeds.add_parser("add", parents=[common], help="follow an RSS or Atom feed")
    f.add_argument("url", metavar="URL", help="the feed's address")
    f = feeds.add_parser("list", parents=[common], help="list the feeds followed")
    f = feeds.add_parser("remove", parents=[common], help="stop following a feed")
    f.add_argument("id", type=article_id, help="the feed's id, as `feed list` shows it")
    f = feeds.add_parser("poll", parents=[common], help="add the new articles of every feed")
    p.set_defaults(func=cmd_feed)
