"""A question's vector is kept for the next time it is asked: retrieval embeds it, and so does
the reading of whether it asks what an article is about (summaries/overview.py), so each
question used to run the model twice."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from index.embedding.base import RECENT_QUERIES, Embedder


class _Counting(Embedder):
    """An embedder whose model is a count of the texts it was run on (a stand-in for the model,
    which the behaviour under test does not depend on)."""

    name, dim = "counting", 2

    def __init__(self) -> None:
        self.runs: list[str] = []

    def _start(
        self,
        texts: Sequence[str],
        *,
        query: bool,
        sentences: Sequence[Sequence[str]] | None = None,
    ) -> Any:
        self.runs += texts
        vectors = np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

        class Done:
            def result(self) -> np.ndarray:
                return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

        return Done()


def test_a_question_asked_again_is_not_embedded_again_and_its_vector_is_the_callers_own() -> None:
    model = _Counting()
    first = model.encode_query("Who led the project?")
    first[:] = 0.0  # a caller that writes into its vector changes nobody else's
    again = model.encode_query("Who led the project?")
    assert model.runs == ["Who led the project?"]
    assert np.allclose(np.linalg.norm(again), 1.0)
    other = model.encode_query("Where is it?")
    assert model.runs == ["Who led the project?", "Where is it?"]
    assert not np.allclose(other, again)


def test_only_the_last_questions_are_kept() -> None:
    model = _Counting()
    for n in range(RECENT_QUERIES + 1):
        model.encode_query(f"question {n}")
    model.encode_query(f"question {RECENT_QUERIES}")  # the newest: kept
    model.encode_query("question 0")  # the oldest: let go, embedded again
    assert model.runs.count("question 0") == 2
    assert model.runs.count(f"question {RECENT_QUERIES}") == 1
