"""Who may do what: checks that run in the bot (Discord's command visibility is no check)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["editors_only", "is_admin", "may_add"]

T = TypeVar("T")


def is_admin(interaction: discord.Interaction) -> bool:
    return interaction.permissions.manage_guild


def _has_role(user: discord.abc.User, wanted: str) -> bool:
    if not isinstance(user, discord.Member):
        return False
    return any(
        str(role.id) == wanted or role.name.casefold() == wanted.casefold() for role in user.roles
    )


def may_add(user: discord.abc.User, editor_role: str | None, admin: bool) -> bool:
    """Whether this member may add articles in their server."""
    return editor_role is None or admin or _has_role(user, editor_role)


def editors_only() -> Callable[[T], T]:
    """Everyone may add, unless ARTICLEBOT_EDITOR_ROLE names a role (admins always may)."""

    async def predicate(interaction: discord.Interaction[Any]) -> bool:
        bot: ArticleBot = interaction.client
        role = bot.settings.editor_role
        if role is None or may_add(interaction.user, role, is_admin(interaction)):
            return True
        raise app_commands.MissingRole(role)

    return app_commands.check(predicate)
