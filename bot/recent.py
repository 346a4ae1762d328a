"""The article added last in each channel, for a few minutes: a member who shares a link with
`/add` and asks "tl;dr?" right after means that article, though the server holds many."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

__all__ = ["RECENT", "RecentAdds"]

RECENT = timedelta(minutes=10)
_MOST = 10_000  # channels remembered at once; the oldest go first


class RecentAdds:
    """Channel id -> (article id, when it was added there), by the times Discord stamps on the
    interactions and messages (so a test's virtual clock moves them too)."""

    def __init__(self, within: timedelta = RECENT) -> None:
        self.within = within
        self._lock = threading.Lock()
        self._added: dict[int, tuple[int, datetime]] = {}

    def added(self, channel_id: int | None, article_id: int, at: datetime) -> None:
        if channel_id is None:
            return
        with self._lock:
            self._added.pop(channel_id, None)
            self._added[channel_id] = (article_id, at)
            while len(self._added) > _MOST:
                self._added.pop(next(iter(self._added)))

    def article(self, channel_id: int | None, at: datetime) -> int | None:
        """The article added in this channel within `within` before `at`, if any."""
        with self._lock:
            found = self._added.get(channel_id) if channel_id is not None else None
        if found is None or not timedelta(0) <= at - found[1] <= self.within:
            return None
        return found[0]

    def forget(self, article_id: int) -> None:
        with self._lock:
            for channel, (article, _) in list(self._added.items()):
                if article == article_id:
                    del self._added[channel]
