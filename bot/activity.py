"""What the bot did, told once: each question and add is one log line and one count.

A question ends answered, declined (the articles hold no answer), refused (the member is told
why: a cooldown, a permission, a question too long) or failed (the store, or a bug); an add is
added, already present, refused with its reason, or failed. The log line carries the outcome
and the timing, never the question's or the article's text unless ARTICLEBOT_LOG_CONTENT=1.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import discord
from discord import app_commands

from index import AddResult, Answer
from index.errors import ArticlebotError, StorageError
from index.logs import log_event

from .metrics import Metrics

__all__ = ["Activity", "classify", "kind_of"]

log = logging.getLogger("bot.activity")


def kind_of(error: BaseException) -> str:
    """An error's kind, for a metric label: its class, in snake case (a short fixed set)."""
    while isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    return re.sub(r"(?<!^)(?=[A-Z])", "_", type(error).__name__).lower()


def classify(error: BaseException) -> str:
    """ "refused" when the member was told why and what to do, "failed" otherwise."""
    while isinstance(error, app_commands.CommandInvokeError):
        error = error.original
    if isinstance(error, StorageError):
        return "failed"  # the database or the disk, not the member's doing
    refused = (ArticlebotError, app_commands.CheckFailure, app_commands.TransformerError)
    return "refused" if isinstance(error, refused) else "failed"


@dataclass
class Asking:
    """One question under way: the answer, once there is one."""

    via: str
    guild_id: int | None
    question: str
    answer: Answer | None = None
    started: float = field(default_factory=time.perf_counter)


@dataclass
class Adding:
    """One add under way: its result, once there is one."""

    source: str
    guild_id: int | None
    result: AddResult | None = None
    started: float = field(default_factory=time.perf_counter)


class Activity:
    """Counts into the bot's metrics and writes the log line, for questions, adds and feeds."""

    def __init__(self) -> None:
        self.metrics = Metrics()

    def question(
        self,
        asking: Asking,
        outcome: str,
        *,
        error: BaseException | None = None,
    ) -> None:
        seconds = time.perf_counter() - asking.started
        self.metrics.question(outcome, asking.via, seconds)
        answer = asking.answer
        fields = {
            "outcome": outcome,
            "via": asking.via,
            "guild": asking.guild_id,
            "seconds": round(seconds, 3),
            "question_chars": len(asking.question),
            "citations": len(answer.citations) if answer else None,
            "error": kind_of(error) if error is not None else None,
        }
        if outcome == "failed" and error is not None:
            self.metrics.error(kind_of(error))
        log_event(log, "question", fields, content={"question": asking.question})

    def add(self, adding: Adding, outcome: str, *, error: BaseException | None = None) -> None:
        seconds = time.perf_counter() - adding.started
        reason = kind_of(error) if error is not None else ""
        self.metrics.add(outcome, reason, adding.source, seconds)
        result = adding.result
        article = result.article if result else None
        fields = {
            "outcome": outcome,
            "source": adding.source,
            "guild": adding.guild_id,
            "seconds": round(seconds, 3),
            "article": article.id if article else None,
            "passages": article.passages if article and result and result.added else None,
            "reason": reason or None,
        }
        if outcome == "failed" and error is not None:
            self.metrics.error(kind_of(error))
        content = {"title": article.title, "url": article.url} if article else None
        log_event(log, "add", fields, content=content)

    def feed_poll(self, *, ok: bool, added: int, failed: int, seconds: float) -> None:
        self.metrics.feed_poll(ok, added)
        fields = {
            "outcome": "ok" if ok else "failed",
            "added": added,
            "failed_feeds": failed,
            "seconds": round(seconds, 3),
        }
        log_event(log, "feed_poll", fields)

    def error(self, error: BaseException) -> None:
        self.metrics.error(kind_of(error))

    @contextlib.contextmanager
    def asking(
        self,
        via: str,
        guild_id: int | None,
        question: str,
        interaction: discord.Interaction | None = None,
    ) -> Iterator[Asking]:
        """Count the question in the block: answered or declined by the answer it sets,
        refused or failed by the error that leaves it (which goes on to its handler)."""
        asking = Asking(via, guild_id, question)
        if interaction is not None:
            # The tree's error handler leaves this interaction's error to this count.
            interaction.extras["counted"] = True
        try:
            yield asking
        except Exception as error:
            self.question(asking, classify(error), error=error)
            raise
        if asking.answer is not None:
            self.question(asking, "declined" if asking.answer.abstained else "answered")

    @contextlib.contextmanager
    def adding(
        self, source: str, guild_id: int | None, interaction: discord.Interaction | None = None
    ) -> Iterator[Adding]:
        """Count the add in the block, as `asking` counts a question."""
        adding = Adding(source, guild_id)
        if interaction is not None:
            interaction.extras["counted"] = True
        try:
            yield adding
        except Exception as error:
            self.add(adding, classify(error), error=error)
            raise
        if adding.result is not None:
            self.add(adding, "added" if adding.result.added else "already_present")
