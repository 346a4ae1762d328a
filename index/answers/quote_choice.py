"""Which sentences an answer quotes: each candidate sentence's chance of holding the answer, and
the run of sentences worth its length.

A sentence is read by what the words say of it (its share of the question's word weight,
whether it holds what an English question asks for), by what the model says (its cosine to the
question embedded alone and as stored with its passage), by its passage's score, and by the
same of the sentences beside it: an answer often sits next to the sentence that repeats the
question's words ("She also holds the record." after the sentence that names her).
A softmax over the candidates turns these into chances that add up to one; its weights are
data (`quote-weights.json`), fitted by `python -m index.ops.fit_quotes` on the training data
only. The quote is then the run of neighbouring sentences whose chances, less a cost for each
character, add up to most: a sure sentence is quoted alone, an unsure choice between two
neighbours quotes both, so that a quote is as long as the doubt, not a fixed window.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = [
    "FEATURES",
    "WEIGHTS_FILE",
    "Evidence",
    "QuoteWeights",
    "best_run",
    "table",
]

WEIGHTS_FILE = Path(__file__).with_name("quote-weights.json")

# What is read of each candidate sentence, in the order of the weights' file.
FEATURES = (
    "words",  # its share of the question's word weight (ranking.coverage)
    "kind",  # 1 when it holds what an English question asks for (question_kinds.py)
    "passage",  # its passage's score over the best passage's
    "alone",  # its cosine embedded alone, beyond the closest's (far below when not embedded)
    "stored",  # its cosine as stored with its passage, beyond the closest's
    "read_alone",  # 1 when it was embedded alone
    "words_before",  # the same of the sentence before it in its passage (none: the least)
    "words_after",
    "alone_before",
    "alone_after",
    "stored_before",
    "stored_after",
    "most_words",  # 1 for its passage's sentence with the most of the question's words
    "closest_stored",  # 1 for its passage's closest sentence as stored
    "closest_alone",  # 1 for its passage's closest sentence embedded alone
    "length",  # log of its characters
    "opens_passage",  # 1 for a passage's first sentence
)


@dataclass(frozen=True)
class Evidence:
    """Per candidate sentence (in the order of `places`), what the words and the model say."""

    places: Sequence[tuple[int, int]]  # (the passage's rank among the hits, place in it)
    lengths: Sequence[int]  # characters
    words: Sequence[float]
    kind: Sequence[float]
    passage: Sequence[float]
    alone: Sequence[float]
    stored: Sequence[float]
    read_alone: Sequence[float]


def table(evidence: Evidence) -> np.ndarray:
    """One row of `FEATURES` per candidate sentence."""
    columns = {
        name: np.asarray(getattr(evidence, name), dtype=np.float64)
        for name in ("words", "kind", "passage", "alone", "stored", "read_alone")
    }
    at = {place: i for i, place in enumerate(evidence.places)}
    n = len(evidence.places)

    def beside(name: str, step: int) -> np.ndarray:
        column = columns[name]
        # A sentence with no neighbour on that side reads as the least of its kind: 0 words,
        # the farthest meaning.
        missing = 0.0 if name == "words" else float(column.min(initial=0.0))
        out = np.full(n, missing)
        for i, (rank, place) in enumerate(evidence.places):
            j = at.get((rank, place + step))
            if j is not None:
                out[i] = column[j]
        return out

    def first_in_passage(name: str) -> np.ndarray:
        column = columns[name]
        out = np.zeros(n)
        best: dict[int, int] = {}
        for i, (rank, _) in enumerate(evidence.places):
            if rank not in best or column[i] > column[best[rank]]:
                best[rank] = i
        out[list(best.values())] = 1.0
        return out

    made = {
        **columns,
        "words_before": beside("words", -1),
        "words_after": beside("words", 1),
        "alone_before": beside("alone", -1),
        "alone_after": beside("alone", 1),
        "stored_before": beside("stored", -1),
        "stored_after": beside("stored", 1),
        "most_words": first_in_passage("words"),
        "closest_stored": first_in_passage("stored"),
        "closest_alone": first_in_passage("alone"),
        "length": np.log1p(np.asarray(evidence.lengths, dtype=np.float64)),
        "opens_passage": np.array([1.0 if place == 0 else 0.0 for _, place in evidence.places]),
    }
    return np.column_stack([made[name] for name in FEATURES]) if n else np.zeros((0, len(FEATURES)))


@dataclass(frozen=True)
class QuoteWeights:
    """The fitted softmax: standardised features times weights."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def read(cls, path: Path = WEIGHTS_FILE) -> QuoteWeights:
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(
                f"{path.name} was fitted on other features than quote_choice.FEATURES; "
                "fit it again with `python -m index.ops.fit_quotes`."
            )
        return cls(
            np.asarray(data["weights"], dtype=np.float64),
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
        )

    def chances(self, rows: np.ndarray) -> np.ndarray:
        """Each candidate's chance of being the one that holds the answer (they add up to 1)."""
        if not len(rows):
            return np.zeros(0)
        logits = ((rows - self.mean) / self.scale) @ self.weights
        exp = np.exp(logits - logits.max())
        return exp / exp.sum()


@functools.cache
def shipped() -> QuoteWeights:
    return QuoteWeights.read()


def best_run(
    places: Sequence[tuple[int, int]],
    lengths: Sequence[int],
    chances: Sequence[float],
    length_cost: float,
    budget: int,
) -> tuple[float, list[int]]:
    """The run of neighbouring sentences of one passage (indices into `places`) whose chances
    less `length_cost` per 100 characters add up to most, within `budget` characters (one
    sentence always fits); and that sum."""
    by_passage: dict[int, list[int]] = {}
    for i, (rank, _) in enumerate(places):
        by_passage.setdefault(rank, []).append(i)
    best_value, best = -math.inf, []
    for members in by_passage.values():
        members.sort(key=lambda i: places[i][1])
        for start in range(len(members)):
            held, length = 0.0, 0
            for stop in range(start, len(members)):
                i = members[stop]
                if stop > start and places[i][1] != places[members[stop - 1]][1] + 1:
                    break  # not neighbours in the passage
                length += lengths[i] + 1
                if stop > start and length > budget:
                    break
                held += chances[i]
                value = held - length_cost * length / 100
                if value > best_value:
                    best_value, best = value, members[start : stop + 1]
    return best_value, best
