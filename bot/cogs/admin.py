"""Admin commands (Manage Server): `/rebuild` with live progress, and `/stats` (the index and
the feedback on answers).

Both are hidden from other members by default permissions, and checked in the bot too:
default permissions only hide a command in Discord's client, and a server can change them.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict

import discord
from discord import app_commands
from discord.ext import commands

from index import Progress, RebuildResult
from index.messages import N_

from ..client import ArticleBot
from ..errors import Refused
from ..render import rebuild_text, stats_embed
from ..words import interaction_locale
from ..work import defer, finish, with_progress


class Admin(commands.Cog):
    """Keeping a server's index healthy."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot
        self._rebuilding: defaultdict[int, asyncio.Lock] = defaultdict(asyncio.Lock)

    @app_commands.command(
        name="rebuild",
        description=N_("Rebuild this server's search index, showing progress as it goes."),
    )
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.checks.has_permissions(manage_guild=True)
    @app_commands.describe(
        reembed=N_("Embed every paragraph again (slow; needed after changing the model)")
    )
    async def rebuild(self, interaction: discord.Interaction, reembed: bool = False) -> None:
        assert interaction.guild_id is not None  # the tree admits server interactions only
        lock = self._rebuilding[interaction.guild_id]
        if lock.locked():
            raise Refused(N_("A rebuild of this server's index is already running; wait for it."))
        async with lock:
            collection = self.bot.collection(interaction.guild_id)
            await defer(interaction, ephemeral=True)

            # Questions keep using the old index until the core swaps the new one in.
            def job(progress: Progress) -> RebuildResult:
                return collection.rebuild(reembed=reembed, progress=progress)

            result = await with_progress(interaction, job)
            await finish(interaction, content=rebuild_text(result, interaction_locale(interaction)))

    @app_commands.command(
        name="stats",
        description=N_(
            "Show this server's articles, passages, model, index size and feedback on answers."
        ),
    )
    @app_commands.guild_only()
    @app_commands.default_permissions(manage_guild=True)
    @app_commands.checks.has_permissions(manage_guild=True)
    async def stats(self, interaction: discord.Interaction) -> None:
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction, ephemeral=True)
        stats = await asyncio.to_thread(collection.stats)
        votes = await asyncio.to_thread(self.bot.conversations.counts, collection.name)
        name = interaction.guild.name if interaction.guild else "?"
        locale = interaction_locale(interaction)
        await finish(interaction, embed=stats_embed(stats, name, votes, locale))


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Admin(bot))
