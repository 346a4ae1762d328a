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

from index.messages import LOCALES, N_, display_name

from ..checks import role_name
from ..client import ArticleBot
from ..errors import NO_PINGS
from ..markup import clip
from ..server_settings import ServerSettings
from ..words import interaction_locale, translate
from .summaries import period


def settings_embed(
    settings: ServerSettings,
    guild: discord.Guild,
    writer: str | None = None,
    locale: str | None = None,
) -> discord.Embed:
    """The server's settings, each with the command that changes it (`writer`: its written
    answers' state, bot/writing.py), in `locale`'s words."""

    def said(message: str, **fields: object) -> str:
        return translate(locale, message, **fields)

    channels = " ".join(f"<#{c}>" for c in sorted(settings.mention_channels))
    role = role_name(guild, settings.editor_role) if settings.editor_role else None
    feed = f"<#{settings.feed_channel}>" if settings.feed_channel else said(N_("no channel"))
    digest = said(N_("off"))
    if settings.digest_every and settings.digest_channel:
        every = _EVERY.get(settings.digest_every, "{channel}")
        digest = said(every, channel=f"<#{settings.digest_channel}>")
    who = (
        said(N_("the {role} role and admins"), role=discord.utils.escape_markdown(role))
        if role
        else said(N_("everyone"))
    )
    lines = [
        said(
            N_("**Mentions** answered in: {channels}"),
            channels=channels or said(N_("every channel")),
        )
        + " · `/settings mentions`",
        said(
            N_("**Answer threads**: {state}"),
            state=said(N_("on") if settings.threads else N_("off")),
        )
        + " · `/settings threads`",
        said(N_("**New feed articles** announced in: {channel}"), channel=feed)
        + " · `/settings feed-channel`",
        said(N_("**Digest** of new articles: {digest}"), digest=digest) + " · `/settings digest`",
        said(N_("**Adding articles**: {who}"), who=who) + " · `/settings editor-role`",
        *(
            [said(N_("**Written answers**: {state}"), state=writer) + " · `/settings writer`"]
            if writer
            else []
        ),
        said(
            N_("**Language** of the bot's words: {language}"),
            language=settings.language or said(N_("each member's own")),
        )
        + " · `/settings language`",
        "",
        said(N_("`/ask` works in every channel.")),
    ]
    return discord.Embed(title=said(N_("Settings")), description="\n".join(lines), colour=0x5865F2)


_EVERY = {"daily": N_("daily in {channel}"), "weekly": N_("weekly in {channel}")}


class Settings(commands.Cog):
    """What a server's admins choose about how the bot behaves there."""

    settings = app_commands.Group(
        name="settings",
        description=N_("Where the bot answers, answer threads, feeds, digests, who may add"),
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
        # Read after the change: a language just fixed is the one this answer is in.
        locale = interaction_locale(interaction)
        writer = self.bot.writing.state(guild.id, locale)
        await interaction.response.send_message(
            embed=settings_embed(now, guild, writer, locale),
            ephemeral=True,
            allowed_mentions=NO_PINGS,
        )

    @settings.command(name="show", description=N_("Show this server's settings."))
    @app_commands.checks.has_permissions(manage_guild=True)
    async def show(self, interaction: discord.Interaction) -> None:
        await self._changed(interaction)

    @settings.command(
        name="mentions",
        description=N_(
            "Choose the channels where mentions are answered (threads of them included)."
        ),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        channel=N_("A channel where mentions of the bot are answered (none: every channel again)"),
        answer=N_("True: answer mentions there too; False: stop answering them there"),
    )
    async def mentions(
        self,
        interaction: discord.Interaction,
        channel: discord.TextChannel | None = None,
        answer: bool = True,
    ) -> None:
        assert interaction.guild_id is not None
        chosen = set(self.bot.server_settings.get(interaction.guild_id).mention_channels)
        if channel is None:
            chosen.clear()
        elif answer:
            chosen.add(channel.id)
        else:
            chosen.discard(channel.id)
        await self._changed(interaction, mention_channels=frozenset(chosen))

    @settings.command(
        name="threads",
        description=N_(
            "Open a thread on each answer for its follow-ups, or answer without threads."
        ),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(on=N_("True: each answer opens a thread for its follow-ups"))
    async def threads(self, interaction: discord.Interaction, on: bool) -> None:
        await self._changed(interaction, threads=on)

    @settings.command(
        name="feed-channel",
        description=N_("Announce new articles from feeds in a channel (none: stop announcing)."),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(channel=N_("Where new articles from followed feeds are announced"))
    async def feed_channel(
        self, interaction: discord.Interaction, channel: discord.TextChannel | None = None
    ) -> None:
        await self._changed(interaction, feed_channel=channel.id if channel else None)

    @settings.command(
        name="digest",
        description=N_(
            "Post a digest of the articles added, each with its summary's first line, on schedule."
        ),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        channel=N_("Where the digest of new articles is posted"),
        every=N_("How often: daily, weekly, or off"),
    )
    async def digest(
        self,
        interaction: discord.Interaction,
        every: Literal["daily", "weekly", "off"],
        channel: discord.TextChannel | None = None,
    ) -> None:
        assert interaction.guild_id is not None
        if every == "off":
            await self._changed(interaction, digest_every=None)
            return
        where = channel or interaction.channel
        if not isinstance(where, discord.TextChannel):
            await interaction.response.send_message(
                translate(
                    interaction_locale(interaction),
                    N_("Choose a text channel for the digest with the channel option."),
                ),
                ephemeral=True,
            )
            return
        # The period under way counts as posted: the first digest comes when the next begins.
        now = period(every, datetime.now(UTC))
        await asyncio.to_thread(
            self.bot.server_settings.claim, interaction.guild_id, f"digest_posted_{every}", now
        )
        await self._changed(interaction, digest_every=every, digest_channel=where.id)

    @settings.command(
        name="writer",
        description=N_(
            "Word answers with the configured model (checked against the quotes), or quote only."
        ),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(on=N_("True: answers worded by the configured model, each checked"))
    async def writer(self, interaction: discord.Interaction, on: bool) -> None:
        await self._changed(interaction, writer=on)

    @settings.command(
        name="language",
        description=N_(
            "Fix the language of the bot's own words here, or leave it to each member (auto)."
        ),
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        language=N_("The bot's own words here in this language for everyone (auto: each member's)")
    )
    async def language(self, interaction: discord.Interaction, language: str) -> None:
        if language == "auto":
            await self._changed(interaction, language=None)
            return
        chosen = _locale_named(language)
        if chosen is None:
            said = N_(
                "There are no messages in “{language}”; choose one of the offered languages, "
                "or auto."
            )
            typed = discord.utils.escape_markdown(clip(language, 40))
            await interaction.response.send_message(
                translate(interaction_locale(interaction), said, language=typed),
                ephemeral=True,
                allowed_mentions=NO_PINGS,
            )
            return
        await self._changed(interaction, language=chosen)

    @language.autocomplete("language")
    async def language_choices(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        auto = translate(interaction_locale(interaction), N_("auto: each member's own language"))
        offered = [("auto", auto)] + [
            (locale, f"{display_name(locale)} ({locale})") for locale in LOCALES
        ]
        wanted = current.strip().lower()
        return [
            app_commands.Choice(name=label, value=value)
            for value, label in offered
            if wanted in label.lower()
        ][:25]

    @settings.command(
        name="editor-role", description=N_("Choose who may add articles (no role: everyone).")
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(role=N_("Only members with this role (and admins) may add articles"))
    async def editor_role(
        self, interaction: discord.Interaction, role: discord.Role | None = None
    ) -> None:
        await self._changed(interaction, editor_role=str(role.id) if role else None)


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Settings(bot))


def _locale_named(value: str) -> str | None:
    """A catalogue's locale from what an admin chose or typed (`pt-BR`, `pt_BR`, `ja`)."""
    known = {locale.lower(): locale for locale in LOCALES}
    return known.get(value.strip().replace("_", "-").lower())
