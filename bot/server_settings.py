"""Each server's `/settings`: where mentions are answered, answer threads, the feed channel, the
editor role. Stored by the core (index/collection_settings.py); the environment's values are
the defaults of a server that has not chosen."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import discord

from index.storage.collection_settings import CollectionSettings

__all__ = ["ServerSettings", "ServerSettingsStore", "collection_name"]


def collection_name(guild_id: int) -> str:
    """Each server's own collection: nothing crosses between servers."""
    return f"guild-{guild_id}"


@dataclass(frozen=True)
class ServerSettings:
    # Channels where a mention of the bot is answered; empty: every channel.
    mention_channels: frozenset[int] = frozenset()
    # Whether an answer opens a thread for its follow-ups (where the bot may create threads).
    threads: bool = True
    # Where articles that followed feeds bring in are announced; None: nowhere.
    feed_channel: int | None = None
    # Only members with this role (id or name) or admins may add; None: everyone may.
    editor_role: str | None = None
    # Where the digest of what the server added is posted, and how often ("daily", "weekly");
    # None: not posted.
    digest_channel: int | None = None
    digest_every: str | None = None
    # Whether answers are worded by the configured writer (/settings writer); None: the
    # environment's default (ARTICLEBOT_LLM_DEFAULT).
    writer: bool | None = None
    # The locale of the bot's own words here whatever a member's (/settings language); None:
    # each member's Discord locale, or their question's language.
    language: str | None = None

    def answers_mentions_in(self, channel: discord.abc.Snowflake) -> bool:
        if not self.mention_channels:
            return True
        # A thread belongs to its channel: a conversation there is in the chosen channel.
        where = channel.parent_id if isinstance(channel, discord.Thread) else channel.id
        return where in self.mention_channels


class ServerSettingsStore:
    """Every server's settings, kept in memory: every mention reads them, so a server's are
    read from where they are stored (a local file, or the database) once a process, off the
    event loop as the server comes online (the bot's on_guild_available)."""

    def __init__(self, stored: CollectionSettings, editor_role: str | None) -> None:
        self._stored = stored
        self._default = ServerSettings(editor_role=editor_role)
        self._cache: dict[int, ServerSettings] = {}

    def get(self, guild_id: int) -> ServerSettings:
        if guild_id not in self._cache:
            chosen = self._stored.get(collection_name(guild_id))
            if "mention_channels" in chosen:
                chosen["mention_channels"] = frozenset(chosen["mention_channels"])
            known = {k: v for k, v in chosen.items() if k in ServerSettings.__dataclass_fields__}
            self._cache[guild_id] = replace(self._default, **known)
        return self._cache[guild_id]

    def update(self, guild_id: int, **changes: Any) -> ServerSettings:
        """Store the changed values and return the server's settings with them."""
        for name, value in changes.items():
            stored = sorted(value) if isinstance(value, frozenset) else value
            self._stored.set(collection_name(guild_id), name, stored)
        self._cache[guild_id] = replace(self.get(guild_id), **changes)
        return self._cache[guild_id]

    def claim(self, guild_id: int, name: str, value: str) -> bool:
        """Whether this process is the one to set `name` to `value` (once, of all of them)."""
        return self._stored.claim(collection_name(guild_id), name, value)

    def close(self) -> None:
        self._stored.close()
