"""Who may do what: checks that run in the bot (Discord's command visibility is no check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["editor_role", "editors_only", "is_admin", "may_add", "role_name"]

T = TypeVar("T")


def is_admin(interaction: discord.Interaction) -> bool:
    return interaction.permissions.manage_guild


def _has_role(user: discord.abc.User, wanted: str) -> bool:
    if not isinstance(user, discord.Member):
        return False
    # A role id (what /settings stores) is matched as an id only: anyone allowed to create
    # roles could otherwise name one after it.
    if wanted.isdigit():
        return any(str(role.id) == wanted for role in user.roles)
    return any(role.name.casefold() == wanted.casefold() for role in user.roles)


def may_add(user: discord.abc.User, editor_role: str | None, admin: bool) -> bool:
    """Whether this member may add articles in their server."""
    return editor_role is None or admin or _has_role(user, editor_role)


def role_name(guild: discord.Guild | None, wanted: str) -> str:
    """A role as members know it: its name, though `/settings` stores its id."""
    role = guild.get_role(int(wanted)) if guild and wanted.isdigit() else None
    return role.name if role else wanted


def editor_role(bot: ArticleBot, guild_id: int | None) -> str | None:
    """The role that may add articles in this server (its `/settings`, else the environment's)."""
    if guild_id is None:
        return bot.settings.editor_role
    return bot.server_settings.get(guild_id).editor_role


def editors_only() -> Callable[[T], T]:
    """Everyone may add, unless the server (or ARTICLEBOT_EDITOR_ROLE) names a role; admins
    always may."""

    async def predicate(interaction: discord.Interaction[Any]) -> bool:
        role = editor_role(interaction.client, interaction.guild_id)
        if role is None or may_add(interaction.user, role, is_admin(interaction)):
            return True
        raise app_commands.MissingRole(role_name(interaction.guild, role))

    return app_commands.check(predicate)
