"""One place that turns any failure into a short, private message that says what to do.

The command tree, modals and views all report through `report()`; the mention path uses
`explain()`. Details go to the log, never a traceback to the channel.
"""

from __future__ import annotations

import logging
import math

import discord
from discord import app_commands

from index.errors import ArticlebotError

__all__ = ["GENERIC", "NO_PINGS", "Refused", "explain", "report"]

log = logging.getLogger(__name__)

GENERIC = "Something went wrong; try again, and tell an admin if it keeps happening."
GUILD_ONLY = "I work inside servers: use me in a channel of a server I have been added to."
NO_PINGS = discord.AllowedMentions.none()

_PERMISSION_NAMES = {
    "manage_guild": "Manage Server",
    "send_messages": "Send Messages",
    "embed_links": "Embed Links",
    "read_message_history": "Read Message History",
    "use_application_commands": "Use Application Commands",
}


class Refused(app_commands.CheckFailure):
    """A request the bot declines; the message says why and what to do instead."""


def _permissions(names: list[str]) -> str:
    shown = [_PERMISSION_NAMES.get(n, n.replace("_", " ").title()) for n in names]
    return " and ".join(shown) if len(shown) < 3 else ", ".join(shown[:-1]) + " and " + shown[-1]


def _unwrap(error: BaseException) -> BaseException:
    while isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    return error


# A refusal can repeat what the user gave (a file's suffix, a link's host): however long that
# was, the message stays well within Discord's 2,000 characters.
REFUSAL_LIMIT = 600


def _clipped(text: str) -> str:
    return text if len(text) <= REFUSAL_LIMIT else text[: REFUSAL_LIMIT - 1].rstrip("\\") + "…"


def explain(error: BaseException) -> tuple[str, bool]:
    """(what the user is told, whether it was unexpected and deserves a traceback in the log)."""
    error = _unwrap(error)
    if isinstance(error, ArticlebotError | Refused):
        return _clipped(str(error)), False
    if isinstance(error, app_commands.CommandOnCooldown):
        return f"Slow down a little: try again in {math.ceil(error.retry_after)} s.", False
    if isinstance(error, app_commands.MissingPermissions):
        return (
            f"You need the {_permissions(error.missing_permissions)} permission to use this.",
            False,
        )
    if isinstance(error, app_commands.BotMissingPermissions):
        return (
            f"I need the {_permissions(error.missing_permissions)} permission here; "
            "ask an admin to grant it.",
            False,
        )
    if isinstance(error, app_commands.MissingRole):
        return (
            f"Only members with the {error.missing_role} role can do that; ask an admin for it.",
            False,
        )
    if isinstance(error, app_commands.NoPrivateMessage):
        return GUILD_ONLY, False
    if isinstance(error, app_commands.TransformerError):
        return "That value does not fit the option; pick one of the suggestions.", False
    if isinstance(error, app_commands.CommandSignatureMismatch | app_commands.CommandNotFound):
        return "This command changed since Discord loaded it; try again in a minute.", False
    if isinstance(error, app_commands.CheckFailure):
        return "You cannot use this command here.", False
    return GENERIC, True


async def report(interaction: discord.Interaction, error: BaseException) -> None:
    """Log the failure and tell the user privately, however far the interaction had got."""
    text, unexpected = explain(error)
    command = interaction.command.qualified_name if interaction.command else interaction.type.name
    if unexpected:
        log.error(
            "Error in %s (guild %s, user %s)",
            command,
            interaction.guild_id,
            interaction.user.id,
            exc_info=error,
        )
    else:
        log.info("Refused %s for user %s: %s", command, interaction.user.id, text)
    if interaction.type is discord.InteractionType.autocomplete:
        return  # an autocomplete cannot show a message
    try:
        if not interaction.response.is_done():
            await interaction.response.send_message(text, ephemeral=True, allowed_mentions=NO_PINGS)
            return
        state = interaction.extras.get("state")
        if state in ("thinking", "progress"):
            # The deferred message already stands in the channel; it becomes the error.
            await interaction.edit_original_response(
                content=text, embeds=[], view=None, allowed_mentions=NO_PINGS
            )
            interaction.extras["state"] = "done"
            if interaction.extras.get("ephemeral"):
                return
            # A public message is no place for one member's error: take it down and say it
            # privately (the edit above completed the "thinking…" state, so this is a new one).
            await interaction.delete_original_response()
        await interaction.followup.send(text, ephemeral=True, allowed_mentions=NO_PINGS)
    except discord.HTTPException:
        log.warning("Could not tell user %s about an error", interaction.user.id, exc_info=True)
