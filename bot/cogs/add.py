"""Adding articles: `/add url:`, `/add file:`, or `/add` alone for a modal to paste text."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import discord
from discord import app_commands
from discord.ext import commands

from index import AddResult, Progress
from index.ingest.readers import read_bytes
from index.messages import N_

from ..checks import editors_only, is_admin
from ..client import ArticleBot
from ..errors import Refused, report
from ..render import add_result_text, added_by
from ..words import interaction_locale, translate
from ..work import MemberCooldown, defer, finish, with_progress

# What the core reads; checked before downloading, so a refusal is immediate.
ACCEPTED = (".txt", ".md", ".markdown", ".html", ".htm", ".pdf")
# A modal's paragraph input holds at most 4,000 characters (Discord's limit).
PASTE_LIMIT = 4_000


class PasteModal(discord.ui.Modal):
    """A title and the article's text, for articles that have no URL or file; its words in
    the member's (the inputs are made for each form, labelled as they are made)."""

    def __init__(self, cog: Add, locale: str | None = None) -> None:
        super().__init__(title=translate(locale, N_("Add an article")), timeout=15 * 60)
        self.cog = cog
        self.article_title: discord.ui.TextInput[PasteModal] = discord.ui.TextInput(
            custom_id="title",
            label=translate(locale, N_("Title")),
            placeholder=translate(
                locale, N_("Optional: the first line of the text is used otherwise")
            ),
            required=False,
            max_length=256,
        )
        self.text: discord.ui.TextInput[PasteModal] = discord.ui.TextInput(
            custom_id="text",
            label=translate(locale, N_("Article text")),
            style=discord.TextStyle.paragraph,
            # Discord stops the text at 4,000 characters before the bot sees it: say so.
            placeholder=translate(
                locale,
                N_("Paste the article (up to 4,000 characters; attach longer ones: /add file:)"),
            ),
            max_length=PASTE_LIMIT,
        )
        self.add_item(self.article_title)
        self.add_item(self.text)

    async def on_submit(self, interaction: discord.Interaction) -> None:
        collection = self.cog.bot.collection(interaction.guild_id)
        title = self.article_title.value.strip() or None
        text, who = self.text.value, added_by(interaction.user)

        def job(progress: Progress) -> AddResult:
            return collection.add_text(
                text, title=title, source="text", added_by=who, progress=progress
            )

        activity = self.cog.bot.telemetry
        with activity.adding("text", interaction.guild_id, interaction) as counted:
            await defer(interaction)
            with self.cog.adding(interaction.guild_id):
                result = await with_progress(interaction, job, executor=self.cog.bot.add_pool)
            self.cog.bot.recent_adds.added(
                interaction.channel_id, result.article.id, interaction.created_at
            )
            locale = interaction_locale(interaction)
            await finish(interaction, content=add_result_text(result, locale))
            counted.result = result

    async def on_error(  # type: ignore[override]
        self, interaction: discord.Interaction, error: Exception
    ) -> None:
        await report(interaction, error)


class Add(commands.Cog):
    """Members (or the editor role) add articles to this server's collection."""

    RATE = (3, 60.0)  # additions per member per minute
    # Adds of one server under way at once: the add threads are shared by every server, and
    # one server's members (each within their own cooldown) must not queue up all of them.
    IN_FLIGHT = 3

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot
        self.cooldown = MemberCooldown(*self.RATE)
        self.in_flight: Counter[int] = Counter()

    @contextlib.contextmanager
    def adding(self, guild_id: int | None) -> Iterator[None]:
        """Count one add of this server while it runs, refusing one too many."""
        key = guild_id or 0
        if self.in_flight[key] >= self.IN_FLIGHT:
            raise Refused(
                N_(
                    "This server already has {count} articles being added; try again when "
                    "they are done."
                ),
                count=self.IN_FLIGHT,
            )
        self.in_flight[key] += 1
        try:
            yield
        finally:
            self.in_flight[key] -= 1

    @app_commands.command(
        name="add",
        description=N_(
            "Add an article from a URL or a file; with neither, paste its text in a form."
        ),
    )
    @app_commands.guild_only()
    @editors_only()
    @app_commands.describe(
        url=N_("A web page to add (http or https)"),
        file=N_("A .txt, .md, .html or .pdf file to add"),
    )
    async def add(
        self,
        interaction: discord.Interaction,
        url: app_commands.Range[str, 4, 2048] | None = None,
        file: discord.Attachment | None = None,
    ) -> None:
        source = "file" if file is not None else "url" if url else "text"
        with self.bot.telemetry.adding(source, interaction.guild_id, interaction) as counted:
            result = await self._add(interaction, url, file)
            counted.result = result

    async def _add(
        self,
        interaction: discord.Interaction,
        url: str | None,
        file: discord.Attachment | None,
    ) -> AddResult | None:
        """The add itself: None when it goes on in the form (the form's submit counts it)."""
        if url and file:
            raise Refused(N_("Give a URL or a file, not both; run /add once for each."))
        limits = self.bot.library.limits
        if file is not None:
            suffix = Path(file.filename).suffix.lower()
            if suffix not in ACCEPTED:
                raise Refused(
                    N_(
                        "I cannot read {suffix} files; attach a .txt, .md, .html or .pdf file "
                        "instead."
                    )
                    if suffix
                    else N_(
                        "I cannot read files without a suffix; attach a .txt, .md, .html or .pdf "
                        "file instead."
                    ),
                    suffix=suffix,
                )
            if file.size > limits.max_file_bytes:
                raise Refused(
                    N_(
                        "That file is {size} MB, over the limit of {limit} MB; split it into "
                        "smaller articles."
                    ),
                    size=f"{file.size / 1e6:.1f}",
                    limit=f"{limits.max_file_bytes / 1e6:.0f}",
                )
        if not is_admin(interaction):  # admins seeding a new server are not slowed down
            self.cooldown.hit(interaction)
        if not url and file is None:
            # A modal must be the first response: it cannot follow a defer.
            await interaction.response.send_modal(PasteModal(self, interaction_locale(interaction)))
            return None
        collection = self.bot.collection(interaction.guild_id)
        who = added_by(interaction.user)
        await defer(interaction)
        if file is not None:
            data, name = await file.read(), file.filename

            def job(progress: Progress) -> AddResult:
                doc = read_bytes(data, name, limits=limits)
                return collection.add(doc, added_by=who, progress=progress)

        else:
            link = (url or "").strip()

            def job(progress: Progress) -> AddResult:
                return collection.add_url(link, added_by=who, progress=progress)

        with self.adding(interaction.guild_id):
            result = await with_progress(interaction, job, executor=self.bot.add_pool)
        self.bot.recent_adds.added(
            interaction.channel_id, result.article.id, interaction.created_at
        )
        await finish(interaction, content=add_result_text(result, interaction_locale(interaction)))
        return result


async def setup(bot: ArticleBot) -> None:
    await bot.add_cog(Add(bot))
