"""Keeping articles current: `/refresh` an article, `/feed` to follow a news site's feed.

Feeds are read every ARTICLEBOT_FEED_POLL_MINUTES on the add threads, so reading them never
keeps a question waiting; each new entry goes through the same checks as any added link. What
they bring is announced in the channel a server chose with `/settings feed-channel`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import TypeVar

import discord
from discord import app_commands
from discord.ext import commands, tasks

from index import AddResult, Article
from index.errors import ArticlebotError
from index.ingest.feed_polling import add_feed, list_feeds, poll_feeds, remove_feed
from index.messages import N_

from ..checks import is_admin
from ..client import ArticleBot
from ..errors import NO_PINGS
from ..lookup import article_choices, own_article
from ..render import MESSAGE, article_line, clip, safe
from ..words import interaction_locale, server_locale, translate
from ..work import defer, finish

log = logging.getLogger(__name__)

T = TypeVar("T")


def refresh_text(result: AddResult, old_number: int, locale: str | None = None) -> str:
    title = safe(clip(" ".join(result.article.title.split()), 200))
    if not result.added:
        return translate(
            locale,
            N_("**{title}** (#{number}) has not changed since it was added."),
            title=title,
            number=old_number,
        )
    return translate(
        locale,
        N_("Updated **{title}**: the new version is #{number}, the old one is gone."),
        title=title,
        number=result.article.number,
    )


def feed_news_text(
    articles: list[Article], lines_of: dict[int, str] | None = None, locale: str | None = None
) -> str:
    """New from the feeds: one line an article, as /articles shows it, and under it the first
    line of its summary (`lines_of`, by article id), within a message."""
    shown = sorted(articles, key=lambda a: a.id)[:10]
    about = lines_of or {}
    lines = [
        translate(
            locale, N_("New from the feeds this server follows ({count}):"), count=len(articles)
        )
    ]
    for a in shown:
        lines.append(clip(article_line(a, locale), 390))
        if about.get(a.id):
            lines.append("> " + safe(clip(" ".join(about[a.id].split()), 150)))
    if len(articles) > len(shown):
        more = len(articles) - len(shown)
        lines.append(translate(locale, N_("… and {count} more in /articles."), count=more))
    return clip("\n".join(lines), MESSAGE)


class Feeds(commands.Cog):
    """Articles that stay current: refreshed pages and followed feeds."""

    feed = app_commands.Group(
        name="feed",
        description=N_("Follow news feeds whose new articles are added on their own"),
        guild_only=True,
        default_permissions=discord.Permissions(manage_guild=True),
    )

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot
        self.poller.change_interval(minutes=bot.settings.feed_poll_minutes)

    async def cog_load(self) -> None:
        self.poller.start()

    async def cog_unload(self) -> None:
        self.poller.cancel()

    async def _on_add_threads(self, job: Callable[..., T], *args: object) -> T:
        """Fetching and embedding run on the add threads, never ahead of a question."""
        return await asyncio.get_running_loop().run_in_executor(self.bot.add_pool, job, *args)

    @app_commands.command(
        name="refresh",
        description=N_(
            "Fetch an article's page again and keep the new version (admins, or who added it)."
        ),
    )
    @app_commands.guild_only()
    @app_commands.describe(article=N_("The article to fetch again (start typing its title)"))
    async def refresh(self, interaction: discord.Interaction, article: str) -> None:
        collection = self.bot.collection(interaction.guild_id)
        with self.bot.telemetry.adding("refresh", interaction.guild_id, interaction) as counted:
            await defer(interaction, ephemeral=True)
            found = await own_article(collection, interaction, article, "refresh")
            result = await self._on_add_threads(collection.refresh, found.id)
            locale = interaction_locale(interaction)
            await finish(interaction, content=refresh_text(result, found.number, locale))
            counted.result = result

    @refresh.autocomplete("article")
    async def refresh_article(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await article_choices(
            self.bot, interaction, current, mine_only=not is_admin(interaction)
        )

    @feed.command(
        name="add", description=N_("Follow a news feed: its new articles are added on their own.")
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        url=N_("The feed's address (RSS or Atom), often linked as RSS on a site")
    )
    async def feed_add(
        self, interaction: discord.Interaction, url: app_commands.Range[str, 4, 2048]
    ) -> None:
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction, ephemeral=True)
        followed, added = await self._on_add_threads(add_feed, collection, url.strip())
        name = safe(clip(followed.title or followed.url, 200))
        said = (
            N_(
                "Now following **{name}** (feed {number}); its news is added every {minutes} "
                "minutes."
            )
            if added
            else N_(
                "Already following **{name}** (feed {number}); its news is added every "
                "{minutes} minutes."
            )
        )
        text = translate(
            interaction_locale(interaction),
            said,
            name=name,
            number=followed.id,
            minutes=self.bot.settings.feed_poll_minutes,
        )
        await finish(interaction, content=text)

    @feed.command(name="list", description=N_("The feeds this server follows."))
    @app_commands.checks.has_permissions(manage_guild=True)
    async def feed_list(self, interaction: discord.Interaction) -> None:
        collection = self.bot.collection(interaction.guild_id)
        feeds = await asyncio.to_thread(list_feeds, collection)
        if not feeds:
            text = translate(
                interaction_locale(interaction),
                N_("This server follows no feeds yet; add one with /feed add."),
            )
        else:
            text = "\n".join(
                clip(f"`{f.id}` {safe(f.title or f.url)} <{f.url}>", 300) for f in feeds
            )
        await interaction.response.send_message(clip(text, 2_000), ephemeral=True)

    @feed.command(
        name="remove", description=N_("Stop following a feed; the articles it brought stay.")
    )
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(feed=N_("The feed's number, as /feed list shows it"))
    async def feed_remove(
        self, interaction: discord.Interaction, feed: app_commands.Range[int, 1]
    ) -> None:
        collection = self.bot.collection(interaction.guild_id)
        gone = await asyncio.to_thread(remove_feed, collection, feed)
        name = safe(clip(gone.title or gone.url, 200))
        said = N_("No longer following **{name}**; its articles stay.")
        await interaction.response.send_message(
            translate(interaction_locale(interaction), said, name=name), ephemeral=True
        )

    @tasks.loop(minutes=30)
    async def poller(self) -> None:
        await self.poll_once()

    @poller.before_loop
    async def _ready(self) -> None:
        await self.bot.wait_until_ready()

    async def poll_once(self) -> int:
        """Read once every feed the servers of this process follow; returns how many articles
        were added. (With several processes on one database, each polls its own servers' feeds,
        so that each feed is read once and its news announced by the process that can.)"""
        added = 0
        try:
            names = await asyncio.to_thread(self.bot.library.store.feed_collections)
        except ArticlebotError as error:
            # The store is down (a database restarting): this round is skipped, and the timer
            # goes on; an error out of a tasks.loop would stop the feeds until a restart.
            log.warning("Could not read which feeds to poll: %s", error)
            self.bot.telemetry.error(error)
            self.bot.telemetry.feed_poll(ok=False, added=0, failed=0, seconds=0.0)
            return 0
        for name in names:
            guild_id = name.removeprefix("guild-")
            if not (guild_id.isdigit() and self.bot.get_guild(int(guild_id))):
                continue
            collection = self.bot.library.collection(name)
            started = time.perf_counter()
            try:
                result = await self._on_add_threads(poll_feeds, collection)
            except Exception as error:  # one server's trouble must not stop the others' feeds
                log.exception("Could not poll the feeds of %s", name)
                self.bot.telemetry.error(error)
                self.bot.telemetry.feed_poll(
                    ok=False, added=0, failed=0, seconds=time.perf_counter() - started
                )
                continue
            self.bot.telemetry.feed_poll(
                ok=True,
                added=result.added,
                failed=result.failed,
                seconds=time.perf_counter() - started,
            )
            added += result.added
            if result.failed:
                log.info("Feeds of %s: %d failed (%s)", name, result.failed, result.errors[:3])
            await self._announce(name, result.articles)
        return added

    async def _announce(self, name: str, new: list[Article]) -> None:
        """Tell the server's feed channel (if it chose one in /settings) what its feeds brought."""
        guild_id = int(name.removeprefix("guild-")) if name.startswith("guild-") else None
        if guild_id is None or not new:
            return
        channel_id = self.bot.server_settings.get(guild_id).feed_channel
        channel = self.bot.get_channel(channel_id) if channel_id else None
        if not isinstance(channel, discord.TextChannel):
            return
        collection = self.bot.library.collection(name)
        try:
            summaries = await asyncio.to_thread(collection.summaries.of_many, new[:10])
            lines = {s.article.id: s.line for s in summaries}
        except ArticlebotError as error:  # announced without them rather than not at all
            log.warning("Could not read the summaries of new feed articles: %s", error)
            lines = {}
        try:
            news = feed_news_text(new, lines, server_locale(self.bot, channel.guild))
            await channel.send(news, allowed_mentions=NO_PINGS)
        except discord.HTTPException as error:
            log.warning("Could not announce feed articles in %s: %s", channel_id, error)


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Feeds(bot))
