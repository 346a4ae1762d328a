"""Whether a question asks what an article is about, in any language the model reads.

Not a list of phrases to match: the question is embedded with the collection's model (its
query side, as retrieval embeds it) beside phrasings of two kinds: those that ask for the gist
of a whole article (overview-phrasings.json, in a dozen languages) and questions of fact
(the same file's, and 1,500 of SQuAD's training questions, overview-specific.json). A question
is an overview when it comes within `CLOSE` of an overview phrasing and its three closest
overview phrasings are closer, on average, than its three closest questions of fact by
`MARGIN`: so "What is the capital of Australia?" stays a question of fact however much it looks
like "What is this about?". With no article in scope, `CLOSE_UNSCOPED` asks for more. A long
question is never an overview: asking for the gist takes a few words. The figures these were
set by are in docs/quality.md ("Overview questions").
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np

__all__ = ["CLOSE", "MARGIN", "MOST_CHARS", "OverviewReader", "chatter", "digest", "phrasings"]

_HERE = Path(__file__).parent
PHRASINGS = _HERE / "overview-phrasings.json"
SPECIFIC = _HERE / "overview-specific.json"
CLOSE = 0.86
CLOSE_UNSCOPED = 0.88
MARGIN = 0.02
MOST_CHARS = 120


class QueryEncoder(Protocol):
    name: str

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def encode_query(self, text: str) -> np.ndarray: ...


def phrasings() -> tuple[list[str], list[str]]:
    """(overview phrasings, questions of fact)."""
    written = json.loads(PHRASINGS.read_text(encoding="utf-8"))
    drawn = json.loads(SPECIFIC.read_text(encoding="utf-8"))["questions"]
    return list(written["overview"]), list(written["specific"]) + list(drawn)


def chatter() -> list[str]:
    """Messages that ask nothing ("thanks!", "ok"), in a few languages."""
    return list(json.loads(PHRASINGS.read_text(encoding="utf-8"))["chatter"])


def digest(texts: Sequence[str]) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()


def vectors_file(model: str) -> Path:
    return _HERE / f"{model}-overview.npy"


class OverviewReader:
    """Reads questions with one model; its phrasings' vectors are read (or, for a model with
    none stored, embedded) once, at the first question."""

    def __init__(self, model: QueryEncoder) -> None:
        self.model = model
        self._lock = threading.Lock()
        self._kinds: tuple[np.ndarray, np.ndarray] | None = None
        self._chatter: np.ndarray | None = None

    def _phrasings(self) -> tuple[np.ndarray, np.ndarray]:
        with self._lock:
            if self._kinds is None:
                overview, specific = phrasings()
                texts = overview + specific
                stored = vectors_file(self.model.name)
                mark = stored.with_suffix(".digest")
                if stored.exists() and mark.exists() and mark.read_text().strip() == digest(texts):
                    vectors = np.load(stored).astype(np.float32)
                else:
                    vectors = np.asarray(self.model.encode_queries(texts), dtype=np.float32)
                self._kinds = (vectors[: len(overview)], vectors[len(overview) :])
            return self._kinds

    def closeness(self, question: str) -> tuple[float, float]:
        """(the cosine of the closest overview phrasing, how much closer the three closest
        overview phrasings come than the three closest questions of fact)."""
        overview, specific = self._phrasings()
        vector = np.asarray(self.model.encode_query(question), dtype=np.float32)
        to_overview = np.sort(overview @ vector)
        to_specific = np.sort(specific @ vector)
        return float(to_overview[-1]), float(to_overview[-3:].mean() - to_specific[-3:].mean())

    def asks_overview(self, question: str, *, scoped: bool = True) -> bool:
        """Whether `question` asks what an article is about, for its gist or a summary;
        `scoped`: an article is in scope (asked of one, or the only one), else more is asked."""
        if len(question) > MOST_CHARS or not any(ch.isalpha() for ch in question):
            return False
        close, margin = self.closeness(question)
        return close >= (CLOSE if scoped else CLOSE_UNSCOPED) and margin > MARGIN

    def asks_something(self, message: str) -> bool:
        """Whether a message in a conversation asks something, in any language: it has a
        question mark of any script, or it comes closer to a question (of fact, or for an
        overview) than to the messages that ask nothing ("thanks!", "ok", "merci")."""
        if _QUESTION_MARKS.search(message):
            return True
        if not any(ch.isalnum() for ch in message):
            return False
        overview, specific = self._phrasings()
        with self._lock:
            if self._chatter is None:
                self._chatter = np.asarray(self.model.encode_queries(chatter()), dtype=np.float32)
            idle = self._chatter
        vector = np.asarray(self.model.encode_query(message), dtype=np.float32)
        asking = max(float((overview @ vector).max()), float((specific @ vector).max()))
        return asking > float((idle @ vector).max())


# The question marks of every script that has its own (Latin's, the full-width, Arabic's,
# Armenian's, Ethiopic's, the inverted and the doubled ones).
_QUESTION_MARKS = re.compile("[?\uff1f\u061f\u055e\u1367\u2e2e\u2047\u2048\u2049\ufe56\u00bf]")
