"""A small simulated server for the bot's tests: a guild, a channel, an admin and a member."""

from __future__ import annotations

from dataclasses import dataclass

import discord
import simcord

from index import Collection, Library

__all__ = ["Server", "callback_types", "edits", "last_said", "make_server"]


@dataclass
class Server:
    """One guild with a channel, an admin (Manage Server) and a plain member."""

    env: simcord.Env
    guild: simcord.GuildHandle
    channel: simcord.ChannelHandle
    admin: simcord.MemberActor
    member: simcord.MemberActor
    library: Library

    @property
    def collection(self) -> Collection:
        return self.library.collection(f"guild-{self.guild.id}")

    def add_text(self, text: str, title: str, by: simcord.MemberActor | None = None) -> int:
        """Arrange an article directly through the core (fast set-up, not the thing tested)."""
        who = f"{by.name} ({by.id})" if by else None
        return self.collection.add_text(text, title=title, added_by=who).article.id


def make_server(env: simcord.Env, library: Library, name: str) -> Server:
    guild = env.create_guild(name)
    channel = guild.create_text_channel("general")
    admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
    admin = guild.add_member(env.create_user(f"{name}-admin"), roles=[admins])
    member = guild.add_member(env.create_user(f"{name}-member"))
    return Server(env, guild, channel, admin, member, library)


def callback_types(env: simcord.Env) -> list[int]:
    """The interaction callback types the bot sent, in order (5 = deferred "thinking…")."""
    return [
        entry.json["type"]
        for entry in env.http_requests
        if entry.method == "POST" and entry.path.endswith("/callback") and entry.json
    ]


def edits(env: simcord.Env) -> list[str]:
    """The contents the bot edited its interaction responses to, in order."""
    return [
        entry.json["content"]
        for entry in env.http_requests
        if entry.method == "PATCH"
        and entry.path.endswith("/messages/@original")
        and entry.json
        and entry.json.get("content")
    ]


def last_said(channel: simcord.ChannelHandle) -> discord.Message | None:
    """The channel's last message someone wrote, not a notice such as "started a thread"."""
    said = [m for m in channel.history() if not m.is_system()]
    return said[-1] if said else None
