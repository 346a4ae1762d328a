"""The bot's metrics in Prometheus's text format: the only module that imports prometheus_client.

Each bot has a registry of its own (not the library's global one), so two bots in one process,
as in the tests, never count into each other. No label carries what members wrote or who they
are: outcomes, how a question came, and kinds of errors only, each from a short fixed set.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from index.library import Totals
from index.ops.backup_record import BackupRecord

__all__ = [
    "WRITER_OUTCOMES",
    "ADD_OUTCOMES",
    "CONTENT_TYPE",
    "QUESTION_OUTCOMES",
    "VIAS",
    "Metrics",
    "Snapshot",
]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
QUESTION_OUTCOMES = ("answered", "declined", "refused", "failed")
# slash: /ask; mention: a message that mentions the bot; thread: a question in an answer's
# thread; reply: a reply to an answer (a follow-up outside a thread).
VIAS = ("slash", "mention", "thread", "reply")
ADD_OUTCOMES = ("added", "already_present", "refused", "failed")
# What became of an answer given to the writer: written (shown), or why its quotes stood: the
# first check it failed, or what the server did (index/writer).
WRITER_OUTCOMES = (
    "written",
    "not_found",
    "citation",
    "quote",
    "number",
    "name",
    "meaning",
    "instruction",
    "mention",
    "link",
    "limits",
    "timeout",
    "unreachable",
    "http_error",
    "invalid_reply",
    "too_long",
    "cut_off",
    "busy",
    "outage",
)
# Seconds: a question takes tens of milliseconds warm, seconds with the model loading.
QUESTION_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
ADD_BUCKETS = (0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)


@dataclass(frozen=True)
class Snapshot:
    """What the store holds and whether the bot is whole, read when /metrics is asked."""

    totals: Totals | None  # None: the store did not answer
    gateway_connected: bool
    model_loaded: bool
    guilds: int
    backup: BackupRecord = BackupRecord(None, None, None, None)  # the data folder's record


class Metrics:
    """Counters of what the bot did since it started, and the gauges of its state."""

    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry()
        self.questions = Counter(
            "articlebot_questions",
            "Questions, by outcome (answered, declined, refused, failed) and how they came",
            ["outcome", "via"],
            registry=registry,
        )
        self.question_seconds = Histogram(
            "articlebot_question_seconds",
            "Seconds from a question's arrival to its answer (or refusal)",
            ["via"],
            buckets=QUESTION_BUCKETS,
            registry=registry,
        )
        self.adds = Counter(
            "articlebot_adds",
            "Articles added, already present, refused (with the reason) or failed",
            ["outcome", "reason", "source"],
            registry=registry,
        )
        self.add_seconds = Histogram(
            "articlebot_add_seconds",
            "Seconds an add took, fetching and embedding included",
            buckets=ADD_BUCKETS,
            registry=registry,
        )
        self.feed_polls = Counter(
            "articlebot_feed_polls",
            "Rounds of reading the followed feeds, by outcome (ok, failed)",
            ["outcome"],
            registry=registry,
        )
        self.feed_articles = Counter(
            "articlebot_feed_articles_added",
            "Articles the feed rounds added",
            registry=registry,
        )
        self.writer_answers = Counter(
            "articlebot_writer_answers",
            "Answers given to the writer: written (shown), or the reason the quotes stood",
            ["outcome"],
            registry=registry,
        )
        for kind in WRITER_OUTCOMES:
            self.writer_answers.labels(kind)
        self.errors = Counter(
            "articlebot_errors",
            "Failures the log reports, by kind (the error's class)",
            ["kind"],
            registry=registry,
        )
        # Every series a dashboard graphs exists from the start, at zero.
        for via in VIAS:
            self.question_seconds.labels(via)
            for outcome in QUESTION_OUTCOMES:
                self.questions.labels(outcome, via)
        for outcome in ("ok", "failed"):
            self.feed_polls.labels(outcome)
        gauges = {
            "gateway_connected": "1 while connected to Discord's gateway",
            "model_loaded": "1 once the embedding model is loaded",
            "store_up": "1 while the store (SQLite or PostgreSQL) answers",
            "guilds": "Discord servers the bot is in",
            "collections": "Collections (a server's articles) in the store",
            "articles": "Articles in the store, over every collection",
            "passages": "Passages (searched paragraphs) in the store",
            "index_memory_bytes": "Bytes of search index the open collections hold in memory",
            "last_backup_timestamp_seconds": "When the newest good backup was written (0: none)",
            "last_backup_age_seconds": "Seconds since the newest good backup (+Inf: none known)",
            "backup_failing": "1 while the last backup run failed (or was stopped)",
        }
        self.state = {
            name: Gauge(f"articlebot_{name}", text, registry=registry)
            for name, text in gauges.items()
        }

    def question(self, outcome: str, via: str, seconds: float) -> None:
        self.questions.labels(outcome, via).inc()
        self.question_seconds.labels(via).observe(seconds)

    def add(self, outcome: str, reason: str, source: str, seconds: float) -> None:
        self.adds.labels(outcome, reason, source).inc()
        self.add_seconds.observe(seconds)

    def feed_poll(self, ok: bool, added: int) -> None:
        self.feed_polls.labels("ok" if ok else "failed").inc()
        self.feed_articles.inc(added)

    def error(self, kind: str) -> None:
        self.errors.labels(kind).inc()

    def writer(self, outcome: str) -> None:
        self.writer_answers.labels(outcome if outcome in WRITER_OUTCOMES else "invalid_reply").inc()

    def show(self, now: Snapshot) -> None:
        """Set the gauges to the state read just before a scrape (the store's counts keep their
        last values while it does not answer: `articlebot_store_up` says so)."""
        self.state["gateway_connected"].set(now.gateway_connected)
        self.state["model_loaded"].set(now.model_loaded)
        self.state["store_up"].set(now.totals is not None)
        self.state["guilds"].set(now.guilds)
        good = now.backup.last_good_at
        self.state["last_backup_timestamp_seconds"].set(good or 0)
        self.state["last_backup_age_seconds"].set(
            max(0.0, time.time() - good) if good else math.inf
        )
        self.state["backup_failing"].set(now.backup.failed_at is not None)
        if now.totals is not None:
            self.state["collections"].set(now.totals.collections)
            self.state["articles"].set(now.totals.articles)
            self.state["passages"].set(now.totals.passages)
            self.state["index_memory_bytes"].set(now.totals.index_memory_bytes)

    def render(self) -> bytes:
        return generate_latest(self.registry)
