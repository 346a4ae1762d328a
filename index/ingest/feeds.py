"""News feeds (RSS, Atom, JSON Feed) read with feedparser: the only module that imports it."""

from __future__ import annotations

from dataclasses import dataclass

from index.errors import BadInput
from index.messages.catalogue import N_

__all__ = ["FeedEntry", "ParsedFeed", "parse_feed"]

# A feed lists its newest entries; a few hundred is more than any site serves at once.
MAX_ENTRIES = 500


@dataclass(frozen=True)
class FeedEntry:
    key: str  # what identifies the entry from poll to poll: its id, else its link
    link: str
    title: str | None


@dataclass(frozen=True)
class ParsedFeed:
    title: str | None
    entries: list[FeedEntry]  # newest first, as feeds list them


def parse_feed(body: bytes, url: str) -> ParsedFeed:
    """The feed's title and entries with a web link, or BadInput when it is not a feed."""
    import feedparser  # imported when a feed is first read: it adds to every start

    # Given bytes, feedparser reads nothing from the network or disk itself.
    parsed = feedparser.parse(body, response_headers={"content-location": url})
    if parsed.get("bozo") and not parsed.get("entries") or not parsed.get("version"):
        raise BadInput(
            N_(
                "That link is not a news feed (RSS or Atom); give the feed's address, "
                "often linked as RSS on the site, or add the article's own link."
            )
        )
    entries = []
    for item in parsed.entries[:MAX_ENTRIES]:
        link = str(item.get("link") or "").strip()
        if not link.lower().startswith(("http://", "https://")):
            continue  # an entry without a web page has no article to add
        key = str(item.get("id") or link).strip()[:2_000]
        title = str(item.get("title") or "").strip() or None
        entries.append(FeedEntry(key, link, title))
    title = str(parsed.feed.get("title") or "").strip() or None
    return ParsedFeed(title, entries)
