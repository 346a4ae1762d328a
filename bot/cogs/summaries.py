"""What articles are about: `/summary` (one article's, quoted and cited as an answer is),
`/digest` (what the server added lately, each with the first line of its summary, paged), and
the digest posted on schedule where `/settings digest` asks for it.

A scheduled digest is posted once a period (a UTC day, or an ISO week) by the process that
serves the server (its shard), and the period posted is kept with the server's settings, which
a process takes with a compare-and-set: a restart, or a second process, never posts it twice.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import discord
from discord import app_commands
from discord.ext import commands, tasks

from index.errors import ArticlebotError
from index.messages import N_

from ..client import ArticleBot
from ..digest_render import digest_pages
from ..errors import NO_PINGS
from ..feedback import with_buttons
from ..lookup import article_choices, find_article
from ..render import FOLLOW_UP_HINT, THREAD_HINT, answer_embed
from ..threads import opens_thread, remember
from ..words import interaction_locale, server_locale
from ..work import defer, finish
from .articles import Pager

log = logging.getLogger(__name__)

DAYS = {"daily": 1, "weekly": 7}


def period(every: str, now: datetime) -> str:
    """The period a scheduled digest covers at `now`: its UTC day, or its ISO week."""
    if every == "weekly":
        year, week, _ = now.isocalendar()
        return f"{year}-W{week:02d}"
    return now.date().isoformat()


class Summaries(commands.Cog):
    """Summaries of this server's articles, and digests of what it added."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        self.scheduled.start()

    async def cog_unload(self) -> None:
        self.scheduled.cancel()

    @tasks.loop(minutes=10)
    async def scheduled(self) -> None:
        await self.post_digests(datetime.now(UTC))

    @scheduled.before_loop
    async def _ready(self) -> None:
        await self.bot.wait_until_ready()

    async def post_digests(self, now: datetime) -> int:
        """Post each scheduled digest whose period has begun and is not posted yet, in the
        servers this process serves; how many were posted."""
        posted = 0
        for guild in list(self.bot.guilds):
            try:
                posted += await self._post_digest(guild, now)
            except Exception:  # one server's trouble must not stop the others' digests
                log.exception("Could not post the digest of server %s", guild.id)
        return posted

    async def _post_digest(self, guild: discord.Guild, now: datetime) -> int:
        settings = self.bot.server_settings.get(guild.id)
        every, channel_id = settings.digest_every, settings.digest_channel
        if every not in DAYS or channel_id is None:
            return 0
        channel = guild.get_channel(channel_id)
        if not isinstance(channel, discord.TextChannel):
            return 0
        claimed = await asyncio.to_thread(
            self.bot.server_settings.claim, guild.id, f"digest_posted_{every}", period(every, now)
        )
        if not claimed:
            return 0
        collection = self.bot.collection(guild.id)
        try:
            summaries = await asyncio.to_thread(collection.digest, DAYS[every])
        except ArticlebotError as error:
            log.warning("Could not read the digest of server %s: %s", guild.id, error)
            return 0
        if not summaries:  # nothing new: no message that says so every day
            return 0
        page = digest_pages(summaries, guild.name, DAYS[every], server_locale(self.bot, guild))[0]
        try:
            await channel.send(embed=page, allowed_mentions=NO_PINGS)
        except discord.HTTPException as error:
            log.warning("Could not post the digest in %s: %s", channel_id, error)
            return 0
        return 1

    @app_commands.command(
        name="summary",
        description=N_("What an article is about, in a few of its own sentences, each cited."),
    )
    @app_commands.guild_only()
    @app_commands.describe(article=N_("The article to summarise (start typing its title)"))
    async def summary(self, interaction: discord.Interaction, article: str) -> None:
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction)
        articles = await asyncio.to_thread(collection.articles)
        chosen = find_article(articles, article)
        answer = await asyncio.to_thread(collection.summary_answer, chosen.id)
        guild = interaction.guild
        assert guild is not None  # the tree admits server interactions only
        # Its thread carries on about this article: follow-ups ask the article it quoted.
        thread = opens_thread(self.bot, interaction.channel, guild, answer)
        locale = interaction_locale(interaction)
        hint = THREAD_HINT if thread else FOLLOW_UP_HINT
        embed = answer_embed(answer, follow_up=hint, locale=locale)
        message = await with_buttons(
            lambda view: finish(interaction, embed=embed, view=view), locale
        )
        await remember(self.bot, guild.id, message, answer, None, thread=thread)
        # Where the server has the writer on, the summary in its words replaces the quotes
        # once every sentence of it checks out against the passages, as an answer's does.
        self.bot.writing.start(
            guild.id,
            message,
            answer,
            follow_up=hint,
            conversation=None,
            locale=locale,
            summary_of=chosen.language or "en",
        )

    @summary.autocomplete("article")
    async def summary_article(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await article_choices(self.bot, interaction, current)

    @app_commands.command(
        name="digest",
        description=N_(
            "What this server added lately, each article with the first line of its summary."
        ),
    )
    @app_commands.guild_only()
    @app_commands.describe(days=N_("Articles added in the last this many days (7 if left out)"))
    async def digest(
        self, interaction: discord.Interaction, days: app_commands.Range[int, 1, 365] = 7
    ) -> None:
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction)
        summaries = await asyncio.to_thread(collection.digest, days)
        name = interaction.guild.name if interaction.guild else "?"
        locale = interaction_locale(interaction)
        pages = digest_pages(summaries, name, days, locale)
        if len(pages) == 1:
            await finish(interaction, embed=pages[0])
            return
        view = Pager(pages, locale)
        view.interaction = interaction
        await finish(interaction, embed=pages[0], view=view)


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Summaries(bot))
