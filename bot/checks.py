"""Who may do what: checks that run in the bot (Discord's command visibility is no check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["editors_only", "is_admin"]

T = TypeVar("T")


def is_admin(interaction: discord.Interaction) -> bool:
    return interaction.permissions.manage_guild


def _has_role(user: discord.abc.User, wanted: str) -> bool:
    if not isinstance(user, discord.Member):
        return False
    return any(
        str(role.id) == wanted or role.name.casefold() == wanted.casefold() for role in user.roles
    )


def editors_only() -> Callable[[T], T]:
    """Everyone may add, unless ARTICLEBOT_EDITOR_ROLE names a role (admins always may)."""

    async def predicate(interaction: discord.Interaction[Any]) -> bool:
        bot: ArticleBot = interaction.client
        role = bot.settings.editor_role
        if role is None or is_admin(interaction) or _has_role(interaction.user, role):
            return True
        raise app_commands.MissingRole(role)

    return app_commands.check(predicate)
