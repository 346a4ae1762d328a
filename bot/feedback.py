"""The "Helpful" / "Not helpful" buttons under every answer.

One persistent view (no timeout, a fixed custom_id per button) serves every answer message:
the bot registers it at start-up, so a click on an answer given before a restart still counts.
The answer is the clicked message itself; its question, citations and text are in the
conversation store, and a vote keeps its own copy of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import discord

from index.messages import N_
from index.storage.conversations import VoteOutcome

from .errors import NO_PINGS, report
from .server_settings import collection_name
from .words import interaction_locale, translate

if TYPE_CHECKING:
    from .client import ArticleBot

T = TypeVar("T")

__all__ = ["FeedbackView", "vote_text", "with_buttons"]


_SAID: dict[tuple[VoteOutcome, bool], str] = {
    ("recorded", True): N_("Thanks: noted as helpful. Admins see the counts in /stats."),
    ("recorded", False): N_("Thanks: noted as not helpful. Admins see the counts in /stats."),
    ("changed", True): N_("Changed your vote on this answer to helpful."),
    ("changed", False): N_("Changed your vote on this answer to not helpful."),
    ("unchanged", True): N_("You already marked this answer as helpful; each member counts once."),
    ("unchanged", False): N_(
        "You already marked this answer as not helpful; each member counts once."
    ),
}
TOO_OLD = N_("This answer is too old to rate now; ask again for a fresh one.")
HELPFUL, NOT_HELPFUL = N_("Helpful"), N_("Not helpful")


def vote_text(outcome: VoteOutcome, helpful: bool, locale: str | None = None) -> str:
    """What the member who clicked is told, privately, in their words."""
    return translate(locale, _SAID.get((outcome, helpful), TOO_OLD))


async def with_buttons(
    send: Callable[[FeedbackView], Awaitable[T]], locale: str | None = None
) -> T:
    """Send an answer with the buttons, labelled in `locale`'s words; the message keeps them,
    but discord.py forgets this copy (it would keep one per answer ever given), and their
    clicks reach the view registered at start-up, which serves every answer alike (by the
    buttons' ids, whatever their labels)."""
    buttons = FeedbackView()
    buttons.helpful.label = translate(locale, HELPFUL)
    buttons.not_helpful.label = translate(locale, NOT_HELPFUL)
    try:
        return await send(buttons)
    finally:
        buttons.stop()


class FeedbackView(discord.ui.View):
    def __init__(self) -> None:
        super().__init__(timeout=None)

    async def _vote(self, interaction: discord.Interaction[Any], helpful: bool) -> None:
        bot: ArticleBot = interaction.client
        if interaction.guild_id is None or interaction.message is None:
            return
        outcome = await asyncio.to_thread(
            bot.conversations.vote,
            collection_name(interaction.guild_id),
            interaction.message.id,
            interaction.user.id,
            helpful,
        )
        await interaction.response.send_message(
            vote_text(outcome, helpful, interaction_locale(interaction)),
            ephemeral=True,
            allowed_mentions=NO_PINGS,
        )

    @discord.ui.button(
        label=HELPFUL, emoji="👍", style=discord.ButtonStyle.secondary, custom_id="answer:helpful"
    )
    async def helpful(self, interaction: discord.Interaction, button: discord.ui.Button[Any]):
        await self._vote(interaction, True)

    @discord.ui.button(
        label=NOT_HELPFUL,
        emoji="👎",
        style=discord.ButtonStyle.secondary,
        custom_id="answer:not-helpful",
    )
    async def not_helpful(self, interaction: discord.Interaction, button: discord.ui.Button[Any]):
        await self._vote(interaction, False)

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        await report(interaction, error)
