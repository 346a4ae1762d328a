"""What articles are about: `/summary` (one article's, quoted and cited as an answer is) and
`/digest` (what the server added lately, each with the first line of its summary, paged)."""

from __future__ import annotations

import asyncio

import discord
from discord import app_commands
from discord.ext import commands

from ..client import ArticleBot
from ..digest_render import digest_pages
from ..feedback import with_buttons
from ..lookup import article_choices, find_article
from ..render import FOLLOW_UP_HINT, THREAD_HINT, answer_embed
from ..threads import opens_thread, remember
from ..work import defer, finish
from .articles import Pager


class Summaries(commands.Cog):
    """Summaries of this server's articles, and digests of what it added."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot

    @app_commands.command(name="summary")
    @app_commands.guild_only()
    @app_commands.describe(article="The article to summarise (start typing its title)")
    async def summary(self, interaction: discord.Interaction, article: str) -> None:
        """What an article is about, in a few of its own sentences, each cited."""
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction)
        articles = await asyncio.to_thread(collection.articles)
        chosen = find_article(articles, article)
        answer = await asyncio.to_thread(collection.summary_answer, chosen.id)
        guild = interaction.guild
        assert guild is not None  # the tree admits server interactions only
        # Its thread carries on about this article: follow-ups ask the article it quoted.
        thread = opens_thread(self.bot, interaction.channel, guild, answer)
        embed = answer_embed(answer, follow_up=THREAD_HINT if thread else FOLLOW_UP_HINT)
        message = await with_buttons(lambda view: finish(interaction, embed=embed, view=view))
        await remember(self.bot, guild.id, message, answer, None, thread=thread)

    @summary.autocomplete("article")
    async def summary_article(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        return await article_choices(self.bot, interaction, current)

    @app_commands.command(name="digest")
    @app_commands.guild_only()
    @app_commands.describe(days="Articles added in the last this many days (7 if left out)")
    async def digest(
        self, interaction: discord.Interaction, days: app_commands.Range[int, 1, 365] = 7
    ) -> None:
        """What this server added lately, each article with the first line of its summary."""
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction)
        summaries = await asyncio.to_thread(collection.digest, days)
        name = interaction.guild.name if interaction.guild else "this server"
        pages = digest_pages(summaries, name, days)
        if len(pages) == 1:
            await finish(interaction, embed=pages[0])
            return
        view = Pager(pages)
        view.interaction = interaction
        await finish(interaction, embed=pages[0], view=view)


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Summaries(bot))
