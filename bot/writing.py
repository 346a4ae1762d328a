"""Written answers in Discord: the quoted answer is sent at once, and the writer's, once it has
passed every check (index/writer), replaces it in one edit.

The writer runs on threads of its own, a few more than the writes it may have under way, so
that a slow or silent server holds none of the threads that answer questions, and a question
past the cap is told "busy" at once rather than queued (index/writer/client.py). Nothing here
delays the quoted answer: the edit comes after it, or not at all.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import discord

from index import Answer
from index.messages import N_
from index.writer import write_answer, write_summary

from .render import EMBED_TITLE, answer_embed, clip, safe
from .server_settings import collection_name
from .words import translate

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["QUOTES_FIELD", "Rewriter", "written_embed"]

log = logging.getLogger(__name__)

QUOTES_FIELD = N_("The articles' own words")
FIELD_VALUE = 1_024


def written_embed(
    written: Answer, quoted: Answer, *, follow_up: str | None, locale: str | None = None
) -> discord.Embed:
    """The written answer (not a block quote: the model's words, not the articles'), its
    sources as the quoted answer's, who wrote it, and the quoted answer one click away (a
    spoiler); the bot's words in `locale`'s."""
    embed = answer_embed(written, follow_up=follow_up, locale=locale)
    embed.description = (embed.description or "").removeprefix("> ")
    model = safe(written.written_by or "?", markdown=False)
    said = translate(
        locale, N_("Written by {model}, each sentence checked against its source"), model=model
    )
    embed.set_author(name=clip(said, EMBED_TITLE))
    body = clip(safe(" ".join(quoted.answer.split())), FIELD_VALUE - 4)
    embed.add_field(name=translate(locale, QUOTES_FIELD), value=f"||{body}||", inline=False)
    return embed


class Rewriter:
    """Asks the writer for each answer of a server that has it on, and edits the answer."""

    def __init__(self, bot: ArticleBot) -> None:
        self.bot = bot
        writer = bot.library.writer
        slots = getattr(getattr(writer, "settings", None), "concurrency", 1)
        self._pool = (
            ThreadPoolExecutor(slots + 2, thread_name_prefix="articlebot-write")
            if writer is not None
            else None
        )
        self._tasks: set[asyncio.Task[None]] = set()

    def on_in(self, guild_id: int) -> bool:
        """Whether this server's answers are written: a writer is configured, and the server
        chose it, or has not chosen and the default is on."""
        if self.bot.library.writer is None:
            return False
        chosen = self.bot.server_settings.get(guild_id).writer
        return self.bot.settings.writer_default if chosen is None else chosen

    def state(self, guild_id: int, locale: str | None = None) -> str:
        """This server's written answers, as /settings shows them."""
        writer = self.bot.library.writer
        if writer is None:
            return translate(locale, N_("no writer configured (answers quote the articles)"))
        shown = safe(writer.model, markdown=False)
        if self.on_in(guild_id):
            return translate(locale, N_("on, by {model}"), model=shown)
        return translate(locale, N_("off ({model} is configured)"), model=shown)

    def start(
        self,
        guild_id: int,
        message: discord.Message | None,
        answer: Answer,
        *,
        follow_up: str | None,
        conversation: int | None,
        locale: str | None = None,
        summary_of: str | None = None,
    ) -> None:
        """Begin writing `answer` again, in the background, where the server has it on (the
        bot's words around it in `locale`'s, as the quoted answer's are). `summary_of`: the
        language of the article whose summary `answer` is (/summary), written in it."""
        if message is None or answer.abstained or not self.on_in(guild_id):
            return
        task = asyncio.create_task(
            self._rewrite(guild_id, message, answer, follow_up, conversation, locale, summary_of)
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _rewrite(
        self,
        guild_id: int,
        message: discord.Message,
        answer: Answer,
        follow_up: str | None,
        conversation: int | None,
        locale: str | None,
        summary_of: str | None,
    ) -> None:
        loop = asyncio.get_running_loop()
        writer = self.bot.library.writer
        try:
            model = self.bot.collection(guild_id).embedder()
            if summary_of is None:
                job = functools.partial(write_answer, answer, writer, model)
            else:
                job = functools.partial(write_summary, answer, summary_of, writer, model)
            written = await loop.run_in_executor(self._pool, job)
        except Exception:  # the quoted answer stands; a bug here is logged, never shown
            log.exception("Could not write answer %s", message.id)
            return
        self.bot.telemetry.metrics.writer(written.kind)
        log.debug("writer outcome=%s seconds=%.3f", written.kind, written.seconds)
        if not written.written:
            return
        try:
            embed = written_embed(written.answer, answer, follow_up=follow_up, locale=locale)
            await message.edit(embed=embed)
        except discord.HTTPException:
            log.warning("Could not show the written answer of %s", message.id, exc_info=True)
            return
        try:  # votes on the message judge what it now shows
            await asyncio.to_thread(
                self.bot.conversations.record,
                collection_name(guild_id),
                message.id,
                written.answer,
                conversation=conversation,
            )
        except Exception:
            log.exception("Could not keep written answer %s", message.id)

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

    async def settled(self) -> None:
        """Wait for the writes under way (tests, and a clean stop)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
