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

from index.storage.conversations import VoteOutcome

from .errors import NO_PINGS, report
from .server_settings import collection_name

if TYPE_CHECKING:
    from .client import ArticleBot

T = TypeVar("T")

__all__ = ["FeedbackView", "vote_text", "with_buttons"]


def vote_text(outcome: VoteOutcome, helpful: bool) -> str:
    """What the member who clicked is told, privately."""
    judged = "helpful" if helpful else "not helpful"
    if outcome == "recorded":
        return f"Thanks: noted as {judged}. Admins see the counts in /stats."
    if outcome == "changed":
        return f"Changed your vote on this answer to {judged}."
    if outcome == "unchanged":
        return f"You already marked this answer as {judged}; each member counts once."
    return "This answer is too old to rate now; ask again for a fresh one."


async def with_buttons(send: Callable[[FeedbackView], Awaitable[T]]) -> T:
    """Send an answer with the buttons; the message keeps them, but discord.py forgets this
    copy (it would keep one per answer ever given), and their clicks reach the view registered
    at start-up, which serves every answer alike."""
    buttons = FeedbackView()
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
            vote_text(outcome, helpful), ephemeral=True, allowed_mentions=NO_PINGS
        )

    @discord.ui.button(
        label="Helpful", emoji="👍", style=discord.ButtonStyle.secondary, custom_id="answer:helpful"
    )
    async def helpful(self, interaction: discord.Interaction, button: discord.ui.Button[Any]):
        await self._vote(interaction, True)

    @discord.ui.button(
        label="Not helpful",
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
