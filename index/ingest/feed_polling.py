"""The news feeds a collection follows: added, listed, removed, and polled for new articles.

Polling reads each feed and adds the articles of the entries not taken before, newest first and
at most `per_feed` a feed each round; every entry is recorded once tried, so an article that
cannot be read is not fetched again at every poll. Each article is read through the same checks
as any added URL (its address, its size, the fetch deadline).
"""

from __future__ import annotations

from index.collection import Collection
from index.errors import ArticlebotError, ArticleNotFound
from index.ingest.readers import read_feed
from index.messages.catalogue import N_
from index.records import Article, Feed, PollResult

__all__ = ["add_feed", "list_feeds", "poll_feeds", "remove_feed"]

# The first poll of a new feed takes this many of its newest entries; the older ones are
# marked as seen, so following a feed does not flood the collection with its archive.
PER_FEED = 10


def add_feed(collection: Collection, url: str, *, added_by: str | None = None) -> tuple[Feed, bool]:
    """Follow a feed (read once now, so a link that is not a feed is refused at once)."""
    final, parsed = read_feed(url, limits=collection.limits)
    return collection.store.add_feed(collection.name, final, parsed.title, added_by)


def list_feeds(collection: Collection) -> list[Feed]:
    return collection.store.list_feeds(collection.name)


def remove_feed(collection: Collection, feed_id: int) -> Feed:
    """Stop following a feed; the articles already added from it stay."""
    feed = collection.store.delete_feed(collection.name, feed_id)
    if feed is None:
        raise ArticleNotFound(
            N_("There is no feed {id} in this collection; see `articlebot feed list`."),
            id=str(feed_id),
        )
    return feed


def poll_feeds(collection: Collection, *, per_feed: int = PER_FEED) -> PollResult:
    """Add the new entries of every feed the collection follows."""
    feeds = list_feeds(collection)
    checked = failed = 0
    errors: list[str] = []
    articles: list[Article] = []
    for feed in feeds:
        try:
            _, parsed = read_feed(feed.url, limits=collection.limits)
        except ArticlebotError as exc:
            failed += 1
            errors.append(f"{feed.url}: {exc}")
            continue
        checked += 1
        seen = collection.store.seen_entries(feed.id)
        new = [e for e in parsed.entries if e.key not in seen]
        taken, skipped = new[:per_feed], new[per_feed:]
        for entry in taken:
            try:
                result = collection.add_url(entry.link, added_by=f"feed {feed.id}")
                if result.added:
                    articles.append(result.article)
            except ArticlebotError as exc:
                failed += 1
                errors.append(f"{entry.link}: {exc}")
            collection.store.mark_seen(feed.id, [entry.key])
        collection.store.mark_seen(feed.id, [e.key for e in skipped])
    return PollResult(len(feeds), checked, len(articles), failed, errors, articles)
