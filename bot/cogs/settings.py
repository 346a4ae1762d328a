"""`/settings` (admins): where mentions are answered, answer threads, the feed channel, and who
may add. Each change answers privately with the server's settings as they now stand.

`/ask` works in every channel whatever the mention channels: it is a deliberate request, and
Discord's own Integrations page can limit a command to channels. Mentions are what the setting
is for: a busy channel's chatter that names the bot is no question for it.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Literal

import discord
from discord import app_commands
from discord.ext import commands

from index.messages import LOCALES, display_name

from ..checks import role_name
from ..client import ArticleBot
from ..errors import NO_PINGS
from ..server_settings import ServerSettings
from .summaries import period


def settings_embed(
    settings: ServerSettings, guild: discord.Guild, writer: str | None = None
) -> discord.Embed:
    """The server's settings, each with the command that changes it (`writer`: its written
    answers' state, bot/writing.py)."""
    channels = " ".join(f"<#{c}>" for c in sorted(settings.mention_channels))
    role = role_name(guild, settings.editor_role) if settings.editor_role else None
    lines = [
        f"**Mentions** answered in: {channels or 'every channel'} · `/settings mentions`",
        f"**Answer threads**: {'on' if settings.threads else 'off'} · `/settings threads`",
        "**New feed articles** announced in: "
        f"{f'<#{settings.feed_channel}>' if settings.feed_channel else 'no channel'}"
        " · `/settings feed-channel`",
        "**Digest** of new articles: "
        + (
            f"{settings.digest_every} in <#{settings.digest_channel}>"
            if settings.digest_every and settings.digest_channel
            else "off"
        )
        + " · `/settings digest`",
        "**Adding articles**: "
        f"{f'the {discord.utils.escape_markdown(role)} role and admins' if role else 'everyone'}"
        " · `/settings editor-role`",
        *([f"**Written answers**: {writer} · `/settings writer`"] if writer else []),
        "**Language** of the bot's words: "
        + (settings.language or "each member's own")
        + " · `/settings language`",
        "",
        "`/ask` works in every channel.",
    ]
    return discord.Embed(title="Settings", description="\n".join(lines), colour=0x5865F2)


class Settings(commands.Cog):
    """What a server's admins choose about how the bot behaves there."""

    settings = app_commands.Group(
        name="settings",
        description="Where the bot answers, answer threads, feeds, digests, who may add",
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot

    async def _changed(self, interaction: discord.Interaction, **changes: object) -> None:
        guild = interaction.guild
        assert guild is not None  # the group is for servers only
        store = self.bot.server_settings
        now = (
            await asyncio.to_thread(store.update, guild.id, **changes)
            if changes
            else store.get(guild.id)
        )
        await interaction.response.send_message(
            embed=settings_embed(now, guild, self.bot.writing.state(guild.id)),
            ephemeral=True,
            allowed_mentions=NO_PINGS,
        )

    @settings.command(name="show")
    @app_commands.checks.has_permissions(manage_guild=True)
    async def show(self, interaction: discord.Interaction) -> None:
        """Show this server's settings."""
        await self._changed(interaction)

    @settings.command(name="mentions")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        channel="A channel where mentions of the bot are answered (none: every channel again)",
        answer="True: answer mentions there too; False: stop answering them there",
    )
    async def mentions(
        self,
        interaction: discord.Interaction,
        channel: discord.TextChannel | None = None,
        answer: bool = True,
    ) -> None:
        """Choose the channels where mentions are answered (threads of them included)."""
        assert interaction.guild_id is not None
        chosen = set(self.bot.server_settings.get(interaction.guild_id).mention_channels)
        if channel is None:
            chosen.clear()
        elif answer:
            chosen.add(channel.id)
        else:
            chosen.discard(channel.id)
        await self._changed(interaction, mention_channels=frozenset(chosen))

    @settings.command(name="threads")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(on="True: each answer opens a thread for its follow-ups")
    async def threads(self, interaction: discord.Interaction, on: bool) -> None:
        """Open a thread on each answer for its follow-ups, or answer without threads."""
        await self._changed(interaction, threads=on)

    @settings.command(name="feed-channel")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(channel="Where new articles from followed feeds are announced")
    async def feed_channel(
        self, interaction: discord.Interaction, channel: discord.TextChannel | None = None
    ) -> None:
        """Announce new articles from feeds in a channel (none: stop announcing)."""
        await self._changed(interaction, feed_channel=channel.id if channel else None)

    @settings.command(name="digest")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        channel="Where the digest of new articles is posted",
        every="How often: daily, weekly, or off",
    )
    async def digest(
        self,
        interaction: discord.Interaction,
        every: Literal["daily", "weekly", "off"],
        channel: discord.TextChannel | None = None,
    ) -> None:
        """Post a digest of the articles added, each with its summary's first line, on schedule."""
        assert interaction.guild_id is not None
        if every == "off":
            await self._changed(interaction, digest_every=None)
            return
        where = channel or interaction.channel
        if not isinstance(where, discord.TextChannel):
            await interaction.response.send_message(
                "Choose a text channel for the digest with the channel option.", ephemeral=True
            )
            return
        # The period under way counts as posted: the first digest comes when the next begins.
        now = period(every, datetime.now(UTC))
        await asyncio.to_thread(
            self.bot.server_settings.claim, interaction.guild_id, f"digest_posted_{every}", now
        )
        await self._changed(interaction, digest_every=every, digest_channel=where.id)

    @settings.command(name="writer")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(on="True: answers worded by the configured model, each checked")
    async def writer(self, interaction: discord.Interaction, on: bool) -> None:
        """Word answers with the configured model (checked against the quotes), or quote only."""
        await self._changed(interaction, writer=on)

    @settings.command(name="language")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        language="The bot's own words here in this language for everyone (auto: each member's)"
    )
    async def language(self, interaction: discord.Interaction, language: str) -> None:
        """Fix the language of the bot's own words here, or leave it to each member (auto)."""
        if language == "auto":
            await self._changed(interaction, language=None)
            return
        chosen = _locale_named(language)
        if chosen is None:
            await interaction.response.send_message(
                f"There are no messages in {language!r}; choose one of the offered languages, "
                "or auto.",
                ephemeral=True,
                allowed_mentions=NO_PINGS,
            )
            return
        await self._changed(interaction, language=chosen)

    @language.autocomplete("language")
    async def language_choices(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        offered = [("auto", "auto: each member's own language")] + [
            (locale, f"{display_name(locale)} ({locale})") for locale in LOCALES
        ]
        wanted = current.strip().lower()
        return [
            app_commands.Choice(name=label, value=value)
            for value, label in offered
            if wanted in label.lower()
        ][:25]

    @settings.command(name="editor-role")
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(role="Only members with this role (and admins) may add articles")
    async def editor_role(
        self, interaction: discord.Interaction, role: discord.Role | None = None
    ) -> None:
        """Choose who may add articles (no role: everyone)."""
        await self._changed(interaction, editor_role=str(role.id) if role else None)


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Settings(bot))


def _locale_named(value: str) -> str | None:
    """A catalogue's locale from what an admin chose or typed (`pt-BR`, `pt_BR`, `ja`)."""
    known = {locale.lower(): locale for locale in LOCALES}
    return known.get(value.strip().replace("_", "-").lower())
