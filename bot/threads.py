"""An answer's conversation: kept where the articles are, and a thread opened on the answer
for its follow-ups, where the server and the channel allow one (`/ask`, a mention, `/summary`)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Literal

import discord

from index import Answer

from .render import readable_question
from .server_settings import collection_name

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["THREAD_ARCHIVE_MINUTES", "THREAD_NAME", "opens_thread", "remember"]

log = logging.getLogger(__name__)

THREAD_NAME = 100  # Discord's limit on a thread's name
# A thread with no new message for a day is hidden from the channel list (reopened by a message).
THREAD_ARCHIVE_MINUTES: Literal[1440] = 1440


def opens_thread(bot: ArticleBot, channel: object, guild: discord.Guild, answer: Answer) -> bool:
    """Whether this answer gets a thread for its follow-ups: the server wants them, the
    channel can hold them, the bot may open them, and there is something to follow up."""
    if answer.abstained or not bot.server_settings.get(guild.id).threads:
        return False
    if not isinstance(channel, discord.TextChannel):
        return False  # a thread, a voice channel's chat: no threads grow there
    return channel.permissions_for(guild.me).create_public_threads


async def remember(
    bot: ArticleBot,
    guild_id: int,
    message: discord.Message,
    answer: Answer,
    conversation: int | None,
    *,
    thread: bool,
) -> None:
    """Keep the answer in its conversation (a new one, without), and open its thread."""
    try:
        await asyncio.to_thread(
            bot.conversations.record,
            collection_name(guild_id),
            message.id,
            answer,
            conversation=conversation,
        )
    except Exception:  # the answer is sent and stands; only its follow-ups lose context
        log.exception("Could not keep answer %s in its conversation", message.id)
    if not thread:
        return
    name = readable_question(answer.question, THREAD_NAME)
    try:
        # The thread takes the answer's id: the conversation's key (Discord's rule).
        await message.create_thread(name=name, auto_archive_duration=THREAD_ARCHIVE_MINUTES)
    except discord.HTTPException as error:
        # Permissions can change between the check and the call; the answer stands anyway.
        log.warning("Could not open a thread on answer %s: %s", message.id, error)
