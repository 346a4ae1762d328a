"""Conversations and feedback: the answers given, the questions they followed, and the votes
members cast on them, in `conversations.db` in the data folder (or the library's PostgreSQL
database, see sql.py).

A conversation is a chain of answers under one key (in Discord: the first answer's message, and
the thread opened on it, which shares its id). A follow-up reads the conversation's earlier
questions and the articles they cited, so "why did he go there?" keeps what "he" was; the chain
outlives a restart. Each collection keeps its own conversations: a key from another collection
finds nothing. Old answers are pruned by age and by count per collection, so the file stays
small however many servers ask; the votes keep their own copy of what they judged.

The article store has its own tables; these rows are the bot's memory, not articles: losing
them loses conversations and the votes members gave, never an answer's sources.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from index.records import Answer
from index.storage.data_folder import CONVERSATIONS
from index.storage.sql import Database, SqliteDatabase, Statements

__all__ = ["Conversations", "Turn", "Vote", "VoteOutcome", "Votes"]

FILE_NAME = CONVERSATIONS
# A conversation older than this is over: a reply to it starts afresh.
MAX_AGE_S = 30 * 24 * 3600.0
# Answers remembered per collection; the oldest go first.
MAX_TURNS = 1_000

VoteOutcome = Literal["recorded", "changed", "unchanged", "unknown"]

# The one declaration of these tables, for the conversations file and for PostgreSQL alike
# (postgres/schema.py, version 3): both read BIGINT as a 64-bit integer (Discord's ids) and
# DOUBLE PRECISION as a float.
SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    collection TEXT NOT NULL,
    answer_id BIGINT NOT NULL,
    conversation BIGINT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    abstained INTEGER NOT NULL,
    citations TEXT NOT NULL,
    asked_at DOUBLE PRECISION NOT NULL,
    written_by TEXT,
    PRIMARY KEY (collection, answer_id)
);
CREATE INDEX IF NOT EXISTS turns_by_conversation ON turns (collection, conversation);
CREATE INDEX IF NOT EXISTS turns_by_age ON turns (collection, asked_at);
CREATE TABLE IF NOT EXISTS votes (
    collection TEXT NOT NULL,
    answer_id BIGINT NOT NULL,
    member_id BIGINT NOT NULL,
    helpful INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    abstained INTEGER NOT NULL,
    citations TEXT NOT NULL,
    voted_at DOUBLE PRECISION NOT NULL,
    written_by TEXT,
    PRIMARY KEY (collection, answer_id, member_id)
);
"""
# Columns added since the tables were first declared, added to a file made before on opening
# (the schema check takes a file from before for whole): `written_by`, the model whose words
# an answer was shown in (NULL: the articles' quotes), so votes compare the two kinds.
ADDED_COLUMNS = (("turns", "written_by", "TEXT"), ("votes", "written_by", "TEXT"))
# The tables as the first release with them declared them, for the schema check of a file made
# then and not opened since (a restored backup).
FIRST_SCHEMA = "\n".join(
    line for line in SCHEMA.splitlines() if not line.strip().startswith("written_by")
)


@dataclass(frozen=True)
class Turn:
    """One answer of a conversation: what was asked, and which articles it quoted."""

    answer_id: int
    conversation: int
    question: str
    abstained: bool
    article_ids: tuple[int, ...]


@dataclass(frozen=True)
class Vote:
    """A member's judgement of one answer, with the answer as it was given."""

    collection: str
    answer_id: int
    helpful: bool
    question: str
    answer: str
    abstained: bool
    citations: list[dict[str, Any]]
    voted_at: str
    # The model whose words the answer was shown in; None: the articles' own quotes.
    written_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "answer_id": self.answer_id,
            "helpful": self.helpful,
            "question": self.question,
            "answer": self.answer,
            "abstained": self.abstained,
            "citations": self.citations,
            "voted_at": self.voted_at,
            "written_by": self.written_by,
        }


@dataclass(frozen=True)
class Votes:
    helpful: int
    not_helpful: int


def _citations(answer: Answer) -> str:
    """What a reader of the feedback needs to judge the answer: which paragraph said what."""
    return json.dumps(
        [
            {
                "n": c.n,
                "article_id": c.article_id,
                "title": c.title,
                "url": c.url,
                "paragraph": c.paragraph,
                "quote": c.quote,
            }
            for c in answer.citations
        ],
        ensure_ascii=False,
    )


def _cited(answer: str, citations: str) -> tuple[int, ...]:
    """The articles whose passages the answer quotes (its `[n]` markers), in order."""
    sources = json.loads(citations)
    quoted = [c for c in sources if f"[{c['n']}]" in answer] or sources
    return tuple(dict.fromkeys(c["article_id"] for c in quoted))


class Conversations:
    """The conversations and votes of every collection of one library."""

    def __init__(
        self,
        db: Database,
        *,
        max_age_s: float = MAX_AGE_S,
        max_turns: int = MAX_TURNS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._db = db
        self.max_age_s, self.max_turns, self._clock = max_age_s, max_turns, clock

    @classmethod
    def in_folder(cls, data_dir: Path, **options: Any) -> Conversations:
        db = SqliteDatabase(Path(data_dir) / FILE_NAME, SCHEMA, added_columns=ADDED_COLUMNS)
        return cls(db, **options)

    def close(self) -> None:
        self._db.close()

    def record(
        self, collection: str, answer_id: int, answer: Answer, *, conversation: int | None = None
    ) -> None:
        """Remember an answer, as the start of a conversation or the next turn of one."""
        now = self._clock()
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO turns (collection, answer_id, conversation, question, answer, "
                "abstained, citations, asked_at, written_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (collection, answer_id) DO UPDATE SET "
                "conversation = excluded.conversation, question = excluded.question, "
                "answer = excluded.answer, abstained = excluded.abstained, "
                "citations = excluded.citations, asked_at = excluded.asked_at, "
                "written_by = excluded.written_by",
                (
                    collection,
                    answer_id,
                    answer_id if conversation is None else conversation,
                    answer.question,
                    answer.answer,
                    int(answer.abstained),
                    _citations(answer),
                    now,
                    answer.written_by,
                ),
            )
            self._prune(db, collection, now)

    def _prune(self, db: Statements, collection: str, now: float) -> None:
        db.execute(
            "DELETE FROM turns WHERE collection = ? AND asked_at < ?",
            (collection, now - self.max_age_s),
        )
        db.execute(
            "DELETE FROM turns WHERE collection = ? AND answer_id NOT IN (SELECT answer_id FROM "
            "turns WHERE collection = ? ORDER BY asked_at DESC, answer_id DESC LIMIT ?)",
            (collection, collection, self.max_turns),
        )

    def turn(self, collection: str, answer_id: int) -> Turn | None:
        """The answer with this id, if this collection gave it and still remembers it."""
        rows = self._turns("answer_id = ?", collection, answer_id)
        return rows[0] if rows else None

    def history(self, collection: str, conversation: int, limit: int = 3) -> list[Turn]:
        """The conversation's last `limit` answers, oldest first (none: no such conversation)."""
        rows = self._turns("conversation = ?", collection, conversation)
        return rows[-limit:]

    def _turns(self, where: str, collection: str, key: int) -> list[Turn]:
        cutoff = self._clock() - self.max_age_s
        with self._db.transaction() as db:
            rows = db.execute(
                "SELECT answer_id, conversation, question, answer, abstained, citations FROM turns "
                f"WHERE collection = ? AND {where} AND asked_at >= ? ORDER BY asked_at, answer_id",
                (collection, key, cutoff),
            )
        return [
            Turn(answer_id, conversation, question, bool(abstained), _cited(answer, citations))
            for answer_id, conversation, question, answer, abstained, citations in rows
        ]

    # feedback

    def vote(self, collection: str, answer_id: int, member_id: int, helpful: bool) -> VoteOutcome:
        """Record one member's vote on an answer; a second vote replaces the first, never adds.

        Each step is one statement that the database makes atomic, so that two processes given
        the same click at once still store one vote: the first insert wins, the other finds it.
        """
        key = (collection, answer_id, member_id)
        now = self._clock()
        with self._db.transaction() as db:
            if db.execute(
                "INSERT INTO votes (collection, answer_id, member_id, helpful, question, answer, "
                "abstained, citations, voted_at, written_by) "
                "SELECT collection, answer_id, ?, ?, question, answer, abstained, citations, ?, "
                "written_by FROM turns WHERE collection = ? AND answer_id = ? "
                "ON CONFLICT DO NOTHING RETURNING 1",
                (member_id, int(helpful), now, collection, answer_id),
            ):
                return "recorded"
            if db.execute(
                "UPDATE votes SET helpful = ?, voted_at = ? "
                "WHERE collection = ? AND answer_id = ? AND member_id = ? AND helpful <> ? "
                "RETURNING 1",
                (int(helpful), now, *key, int(helpful)),
            ):
                return "changed"
            if db.execute(
                "SELECT 1 FROM votes WHERE collection = ? AND answer_id = ? AND member_id = ?", key
            ):
                return "unchanged"
            return "unknown"  # pruned long ago, or never an answer of this collection

    def counts(self, collection: str) -> Votes:
        with self._db.transaction() as db:
            ((helpful, total),) = db.execute(
                "SELECT COALESCE(SUM(helpful), 0), COUNT(*) FROM votes WHERE collection = ?",
                (collection,),
            )
        return Votes(helpful, total - helpful)

    def votes(self, collections: Sequence[str] | None = None) -> list[Vote]:
        """Every vote (of these collections), oldest first."""
        query = (
            "SELECT collection, answer_id, helpful, question, answer, abstained, citations, "
            "voted_at, written_by FROM votes"
        )
        params: tuple[str, ...] = ()
        if collections is not None:
            query += f" WHERE collection IN ({', '.join('?' * len(collections))})"
            params = tuple(collections)
        with self._db.transaction() as db:
            rows = db.execute(query + " ORDER BY voted_at, answer_id", params)
        return [
            Vote(
                row[0],
                row[1],
                bool(row[2]),
                row[3],
                row[4],
                bool(row[5]),
                json.loads(row[6]),
                datetime.fromtimestamp(row[7], UTC).isoformat(timespec="seconds"),
                row[8],
            )
            for row in rows
        ]
