"""Running the core off the event loop, and the interaction plumbing every cog shares.

The core is synchronous and CPU-heavy (a model encodes, FAISS searches): it always runs in a
worker thread, so the gateway heartbeat keeps beating while it works.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Any, TypeVar

import discord
from discord import app_commands
from discord.ext import commands

from index import Progress

from .errors import NO_PINGS
from .render import progress_text
from .words import interaction_locale

__all__ = [
    "MemberCooldown",
    "Throttle",
    "defer",
    "finish",
    "with_progress",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


async def defer(interaction: discord.Interaction, *, ephemeral: bool = False) -> None:
    """Acknowledge at once: Discord drops an interaction not answered within 3 seconds."""
    await interaction.response.defer(thinking=True, ephemeral=ephemeral)
    interaction.extras.update(state="thinking", ephemeral=ephemeral)


async def finish(interaction: discord.Interaction, **fields: Any) -> discord.InteractionMessage:
    """Replace the deferred "thinking…" (or progress) message with the result."""
    message = await interaction.edit_original_response(allowed_mentions=NO_PINGS, **fields)
    interaction.extras["state"] = "done"
    return message


class Throttle:
    """Which progress reports become message edits: Discord rate-limits edits, readers need few.

    The first report of each stage is shown; after that, only one that moved at least `step`
    percentage points and came at least `interval` seconds after the last edit.
    """

    def __init__(
        self,
        interval: float = 1.0,
        step: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.step = step
        self._clock = clock
        self._stage: str | None = None
        self._percent = 0.0
        self._at = 0.0

    def due(self, stage: str, done: int, total: int) -> bool:
        percent = 100.0 * done / total if total else 100.0
        now = self._clock()
        if stage != self._stage or (
            percent - self._percent >= self.step and now - self._at >= self.interval
        ):
            self._stage, self._percent, self._at = stage, percent, now
            return True
        return False


async def with_progress(
    interaction: discord.Interaction,
    job: Callable[[Progress], T],
    *,
    throttle: Throttle | None = None,
    executor: Executor | None = None,
) -> T:
    """Run `job(progress)` in a worker thread (of `executor`, if given), editing the deferred
    message as it reports."""
    loop = asyncio.get_running_loop()
    updates: asyncio.Queue[tuple[str, int, int] | None] = asyncio.Queue()
    throttle = throttle or Throttle()
    locale = interaction_locale(interaction)

    def progress(stage: str, done: int, total: int) -> None:
        # Called from the worker thread: hand the report to the loop, never touch it directly.
        loop.call_soon_threadsafe(updates.put_nowait, (stage, done, total))

    async def show() -> None:
        while (item := await updates.get()) is not None:
            while not updates.empty():  # an edit took a while: skip to the latest report
                newer = updates.get_nowait()
                if newer is None:
                    return
                item = newer
            if not throttle.due(*item):
                continue
            try:
                await interaction.edit_original_response(
                    content=progress_text(*item, locale), allowed_mentions=NO_PINGS
                )
                interaction.extras["state"] = "progress"
            except discord.HTTPException:
                log.warning("Could not show progress", exc_info=True)

    shower = asyncio.create_task(show())
    try:
        return await loop.run_in_executor(executor, job, progress)
    finally:
        # Reports still queued when the job ends are dropped: the result replaces them at once.
        updates.put_nowait(None)
        await shower


def _member_key(source: discord.Interaction | discord.Message) -> tuple[int | None, int]:
    author = source.user if isinstance(source, discord.Interaction) else source.author
    return source.guild.id if source.guild else None, author.id


class MemberCooldown:
    """`rate` uses per `per` seconds for each member of each server.

    Kept on the cog instance: `app_commands.checks.cooldown` keeps its buckets in the decorator,
    shared by every bot in the process. Time is the interaction's or message's own creation
    time (from its snowflake), not the wall clock.
    """

    def __init__(self, rate: int, per: float) -> None:
        self.rate, self.per = rate, per
        self._mapping: commands.CooldownMapping[discord.Interaction | discord.Message] = (
            commands.CooldownMapping.from_cooldown(rate, per, _member_key)
        )

    def hit(self, source: discord.Interaction | discord.Message) -> None:
        """Count one use; raise `CommandOnCooldown` when the member must wait."""
        now = source.created_at.timestamp()
        bucket = self._mapping.get_bucket(source, now)
        assert bucket is not None  # a keyed mapping always has a bucket
        retry_after = bucket.update_rate_limit(now)
        if retry_after:
            raise app_commands.CommandOnCooldown(bucket, retry_after)
