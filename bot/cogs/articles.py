"""Listing and removing articles: `/articles` (paged with buttons) and `/remove` (confirmed
with a button, since a removal cannot be undone).

`/remove` stays visible to members: an admin (Manage Server) may remove any article, and a
member may remove the articles they added. Hiding it with default permissions would hide it
from those members too, so the rule is checked in the bot instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import discord
from discord import app_commands
from discord.ext import commands

from index import Article, Collection
from index.messages import N_

from ..checks import is_admin
from ..client import ArticleBot
from ..errors import NO_PINGS, report
from ..lookup import article_choices, own_article
from ..render import article_pages, clip, safe
from ..words import interaction_locale, translate
from ..work import defer, finish

log = logging.getLogger(__name__)


class Pager(discord.ui.View):
    """Previous / next buttons over pages of embeds (on an ephemeral message: the asker's own)."""

    def __init__(self, pages: list[discord.Embed], locale: str | None = None) -> None:
        super().__init__(timeout=10 * 60)
        self.previous.label = translate(locale, N_("Previous"))
        self.next.label = translate(locale, N_("Next"))
        self.pages = pages
        self.page = 0
        self.interaction: discord.Interaction | None = None
        self._update()

    def _update(self) -> None:
        self.previous.disabled = self.page == 0
        self.next.disabled = self.page >= len(self.pages) - 1

    async def _turn(self, interaction: discord.Interaction, step: int) -> None:
        self.page = max(0, min(self.page + step, len(self.pages) - 1))
        self._update()
        await interaction.response.edit_message(
            embed=self.pages[self.page], view=self, allowed_mentions=NO_PINGS
        )

    @discord.ui.button(label="Previous", emoji="◀️", style=discord.ButtonStyle.secondary)
    async def previous(self, interaction: discord.Interaction, button: discord.ui.Button[Pager]):
        await self._turn(interaction, -1)

    @discord.ui.button(label="Next", emoji="▶️", style=discord.ButtonStyle.secondary)
    async def next(self, interaction: discord.Interaction, button: discord.ui.Button[Pager]):
        await self._turn(interaction, 1)

    async def on_timeout(self) -> None:
        if self.interaction is not None:
            # The message may have been dismissed, or its token expired.
            with contextlib.suppress(discord.HTTPException):
                await self.interaction.edit_original_response(view=None)

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Pager]
    ) -> None:
        await report(interaction, error)


class ConfirmRemove(discord.ui.View):
    """Remove / Keep buttons under a private question: a removal cannot be undone, so it
    waits for the member who asked for it to confirm."""

    TIMEOUT = 2 * 60

    def __init__(
        self, collection: Collection, article: Article, interaction: discord.Interaction
    ) -> None:
        super().__init__(timeout=self.TIMEOUT)
        self.collection, self.article = collection, article
        self.asked = interaction  # the /remove whose private message carries the buttons
        self.title = safe(clip(" ".join(article.title.split()), 200))
        self.locale = interaction_locale(interaction)
        self.confirm.label = translate(self.locale, N_("Remove"))
        self.keep.label = translate(self.locale, N_("Keep"))

    def said(self, message: str) -> str:
        return translate(self.locale, message, title=self.title, number=self.article.number)

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if interaction.user.id == self.asked.user.id:
            return True
        await interaction.response.send_message(
            translate(
                interaction_locale(interaction),
                N_("Only the member who asked to remove it can confirm."),
            ),
            ephemeral=True,
        )
        return False

    @discord.ui.button(label="Remove", style=discord.ButtonStyle.danger)
    async def confirm(
        self, interaction: discord.Interaction, button: discord.ui.Button[ConfirmRemove]
    ):
        self.stop()
        # Removing a long article from the index can take longer than Discord waits.
        await interaction.response.defer()
        await asyncio.to_thread(self.collection.remove, self.article.id)
        log.info("User %s removed article %s", interaction.user.id, self.article.id)
        await interaction.edit_original_response(
            content=self.said(N_("Removed **{title}** (#{number}); questions no longer use it.")),
            view=None,
        )

    @discord.ui.button(label="Keep", style=discord.ButtonStyle.secondary)
    async def keep(
        self, interaction: discord.Interaction, button: discord.ui.Button[ConfirmRemove]
    ):
        self.stop()
        await interaction.response.edit_message(
            content=self.said(N_("Kept **{title}** (#{number}).")), view=None
        )

    async def on_timeout(self) -> None:
        # The message may have been dismissed, or its token expired.
        with contextlib.suppress(discord.HTTPException):
            await self.asked.edit_original_response(
                content=self.said(N_("Kept **{title}**: the removal was not confirmed.")),
                view=None,
            )

    async def on_error(
        self, interaction: discord.Interaction, error: Exception, item: discord.ui.Item[Any]
    ) -> None:
        await report(interaction, error)


class Articles(commands.Cog):
    """What this server's collection holds."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot

    @app_commands.command(
        name="articles",
        description=N_("List this server's articles, newest first, with who added them and when."),
    )
    @app_commands.guild_only()
    async def articles(self, interaction: discord.Interaction) -> None:
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction, ephemeral=True)
        articles = await asyncio.to_thread(collection.articles)
        locale = interaction_locale(interaction)
        name = interaction.guild.name if interaction.guild else "?"
        pages = article_pages(articles, name, locale)
        if len(pages) == 1:
            await finish(interaction, embed=pages[0])
            return
        view = Pager(pages, locale)
        view.interaction = interaction
        await finish(interaction, embed=pages[0], view=view)

    @app_commands.command(
        name="remove",
        description=N_("Remove an article, once you confirm (admins, or the member who added it)."),
    )
    @app_commands.guild_only()
    @app_commands.describe(article=N_("The article to remove (start typing its title)"))
    async def remove(self, interaction: discord.Interaction, article: str) -> None:
        collection = self.bot.collection(interaction.guild_id)
        await defer(interaction, ephemeral=True)
        found = await own_article(collection, interaction, article, "remove")
        view = ConfirmRemove(collection, found, interaction)
        question = N_(
            "Remove **{title}** (#{number})? Questions will no longer use it, and this cannot "
            "be undone."
        )
        await finish(interaction, content=view.said(question), view=view)

    @remove.autocomplete("article")
    async def remove_article(
        self, interaction: discord.Interaction, current: str
    ) -> list[app_commands.Choice[str]]:
        # Members are offered only what they added: the rest they could not remove.
        return await article_choices(
            self.bot, interaction, current, mine_only=not is_admin(interaction)
        )


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Articles(bot))
