"""Help: `/help` for the member asking, a welcome when the bot joins a server, `@bot help`."""

from __future__ import annotations

import logging

import discord
from discord import app_commands
from discord.ext import commands

from index.messages import N_

from ..checks import editor_role, is_admin, may_add, role_name
from ..client import ArticleBot
from ..errors import NO_PINGS
from ..render import guide_embed, welcome_embed
from ..words import interaction_locale, server_locale

log = logging.getLogger(__name__)


def greeting_channel(guild: discord.Guild) -> discord.TextChannel | None:
    """The system channel if the bot may write there, else the first channel it may write in."""
    me = guild.me
    candidates = [guild.system_channel] if guild.system_channel else []
    candidates += sorted(guild.text_channels, key=lambda c: c.position)
    for channel in candidates:
        permissions = channel.permissions_for(me)
        if permissions.send_messages and permissions.embed_links:
            return channel
    return None


class Guide(commands.Cog):
    """Tells members what the bot does and what they may do with it."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot

    @app_commands.command(
        name="help", description=N_("What articlebot does, and what you may do with it here.")
    )
    @app_commands.guild_only()
    async def help(self, interaction: discord.Interaction) -> None:
        admin = is_admin(interaction)
        role = editor_role(self.bot, interaction.guild_id)
        embed = guide_embed(
            can_add=may_add(interaction.user, role, admin),
            admin=admin,
            editor_role=role and role_name(interaction.guild, role),
            locale=interaction_locale(interaction),
        )
        await interaction.response.send_message(
            embed=embed, ephemeral=True, allowed_mentions=NO_PINGS
        )

    @commands.Cog.listener()
    async def on_guild_join(self, guild: discord.Guild) -> None:
        # Only for a server that newly added the bot: known servers coming back after a restart
        # arrive as on_guild_available, and are never greeted again.
        channel = greeting_channel(guild)
        if channel is None:
            log.info("No channel to greet server %s in", guild.id)
            return
        try:
            role = editor_role(self.bot, guild.id)  # a server that comes back kept its choice
            locale = server_locale(self.bot, guild)
            welcome = welcome_embed(role and role_name(guild, role), locale)
            await channel.send(embed=welcome, allowed_mentions=NO_PINGS)
        except discord.HTTPException:
            log.warning("Could not greet server %s", guild.id, exc_info=True)


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Guide(bot))
