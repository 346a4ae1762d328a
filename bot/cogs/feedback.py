"""The Helpful / Not helpful buttons under every answer, as a feature of its own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from discord.ext import commands

from ..feedback import FeedbackView

if TYPE_CHECKING:
    from ..client import ArticleBot


class Feedback(commands.Cog):
    """Votes on answers: one persistent view serves the buttons of every answer."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        # Registered as the bot starts, so the buttons under answers given before a restart
        # answer clicks too (their custom ids are fixed).
        self.bot.add_view(FeedbackView())


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Feedback(bot))
