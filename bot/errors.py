"""One place that turns any failure into a short, private message that says what to do.

The command tree, modals and views all report through `report()`; the mention path uses
`explain()`. Details go to the log, never a traceback to the channel.
"""

from __future__ import annotations

import logging
import math

import discord
from discord import app_commands

from index.errors import Worded
from index.messages import N_

from .words import interaction_locale, translate

__all__ = ["GENERIC", "NO_PINGS", "Refused", "explain", "report"]

log = logging.getLogger(__name__)

GENERIC = N_("Something went wrong; try again, and tell an admin if it keeps happening.")
GUILD_ONLY = N_("I work inside servers: use me in a channel of a server I have been added to.")
NO_PINGS = discord.AllowedMentions.none()

# Discord's own names of the permissions, as its settings show them in each language.
_PERMISSION_NAMES = {
    "manage_guild": N_("Manage Server"),
    "send_messages": N_("Send Messages"),
    "embed_links": N_("Embed Links"),
    "read_message_history": N_("Read Message History"),
    "use_application_commands": N_("Use Application Commands"),
}


class Refused(Worded, app_commands.CheckFailure):
    """A request the bot declines; the message says why and what to do instead, raised as the
    core's errors are (an English message marked `N_` and its fields: `Worded`), so that the
    member reads it in their words."""


def _permissions(names: list[str], locale: str | None) -> str:
    shown = [
        translate(locale, _PERMISSION_NAMES[n]) if n in _PERMISSION_NAMES else n for n in names
    ]
    return ", ".join(shown)


def _unwrap(error: BaseException) -> BaseException:
    while isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    return error


# A refusal can repeat what the user gave (a file's suffix, a link's host): however long that
# was, the message stays well within Discord's 2,000 characters.
REFUSAL_LIMIT = 600


def _clipped(text: str) -> str:
    return text if len(text) <= REFUSAL_LIMIT else text[: REFUSAL_LIMIT - 1].rstrip("\\") + "…"


def explain(error: BaseException, locale: str | None = None) -> tuple[str, bool]:
    """(what the user is told, in `locale`'s words; whether it was unexpected and deserves a
    traceback in the log)."""
    error = _unwrap(error)

    def said(message: str, **fields: object) -> str:
        return translate(locale, message, **fields)

    if isinstance(error, Worded):  # the core's errors and the bot's refusals
        return _clipped(error.said_in(locale)), False
    if isinstance(error, app_commands.CommandOnCooldown):
        seconds = math.ceil(error.retry_after)
        return said(N_("Slow down a little: try again in {seconds} s."), seconds=seconds), False
    if isinstance(error, app_commands.MissingPermissions):
        needed = _permissions(error.missing_permissions, locale)
        return said(
            N_("You need the {permissions} permission to use this."), permissions=needed
        ), False
    if isinstance(error, app_commands.BotMissingPermissions):
        needed = _permissions(error.missing_permissions, locale)
        return (
            said(
                N_("I need the {permissions} permission here; ask an admin to grant it."),
                permissions=needed,
            ),
            False,
        )
    if isinstance(error, app_commands.MissingRole):
        return (
            said(
                N_("Only members with the {role} role can do that; ask an admin for it."),
                role=discord.utils.escape_markdown(str(error.missing_role)),
            ),
            False,
        )
    if isinstance(error, app_commands.NoPrivateMessage):
        return said(GUILD_ONLY), False
    if isinstance(error, app_commands.TransformerError):
        return said(N_("That value does not fit the option; pick one of the suggestions.")), False
    if isinstance(error, app_commands.CommandSignatureMismatch | app_commands.CommandNotFound):
        return said(
            N_("This command changed since Discord loaded it; try again in a minute.")
        ), False
    if isinstance(error, app_commands.CheckFailure):
        return said(N_("You cannot use this command here.")), False
    return said(GENERIC), True


async def report(interaction: discord.Interaction, error: BaseException) -> None:
    """Log the failure and tell the user privately, however far the interaction had got."""
    text, unexpected = explain(error, interaction_locale(interaction))
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
