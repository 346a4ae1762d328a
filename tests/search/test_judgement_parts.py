"""The parts behind a decline and a quote chosen by meaning, each alone: the fitted judgement
reading evidence that a collection of one article lacks, and the sentence vectors kept between
questions. Fakes, named so: a judgement of one weight written here (the shipped one's weights
are measured through `articlebot eval`; here only which way one of them leans), and a model
that counts what it is asked to embed."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from index.embedding.calibration import Calibration
from index.search.relevance import FEATURES, Evidence, Judgement, peak
from index.search.sentence_vectors import SentenceVectors
from index.storage.sentence_rows import Stored, split_of

DECLINES = Path(__file__).parents[2] / "index/embedding/multilingual-e5-small-declines.json"

EVIDENCE = Evidence(
    cosine=0.5,
    moved=0.5,
    story_margin=0.4,
    peak=0.2,
    coverage=0.3,
    story=0.4,
    words=3,
    passages=400,
    background=0.0,
    native=True,
    english=True,
    pairs=False,
)


def test_evidence_a_one_article_collection_lacks_is_read_as_the_fitting_datas_mean(
    tmp_path: Path,
) -> None:
    n = len(FEATURES)
    margin_at = FEATURES.index("story_margin")
    mean = [0.0] * n
    mean[margin_at] = 0.6
    weights = [0.0] * n
    weights[margin_at] = 2.0
    fake = tmp_path / "fake-declines.json"
    fake.write_text(
        json.dumps(
            {
                "features": list(FEATURES),
                "weights": weights,
                "bias": 0.1,
                "mean": mean,
                "scale": [1.0] * n,
            }
        ),
        encoding="utf-8",
    )
    judgement = Judgement.load(fake)
    alone = dataclasses.replace(EVIDENCE, story_margin=None)  # no other story to lead
    at_mean = dataclasses.replace(EVIDENCE, story_margin=0.6)
    behind = dataclasses.replace(EVIDENCE, story_margin=0.1)
    assert judgement.margin(alone) == pytest.approx(judgement.margin(at_mean)) == 0.1
    assert judgement.margin(behind) < 0  # and the lead, where there is one, counts

    fake.write_text(
        json.dumps(
            {"features": ["cosine"], "weights": [1.0], "bias": 0.0, "mean": [0.0], "scale": [1.0]}
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="fitted on other features; fit it again"):
        Judgement.load(fake)


class CountingModel:
    """A fake model: each text's vector is made from its length, and every text embedded is
    counted."""

    calibration = Calibration()

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def encode_query(self, text: str) -> np.ndarray:
        return self.encode_documents([text])[0]

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_documents(texts)

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded += texts
        vectors = np.array([[len(t), 1.0] for t in texts], dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _none_stored(ids: list[int]) -> dict[int, Stored]:
    return {}


def test_sentence_vectors_are_kept_for_the_next_questions_within_their_bound() -> None:
    kept = SentenceVectors(size=3)
    model = CountingModel()
    query = model.encode_query("q")
    model.embedded.clear()
    first = kept.meaning(model, query, _none_stored).alone(["a", "bb", "a"])
    assert first[0] == first[2] and model.embedded == ["a", "bb"]  # each text once
    kept.meaning(model, query, _none_stored).alone(["bb", "ccc"])
    assert model.embedded == ["a", "bb", "ccc"]  # "bb" was kept
    kept.meaning(model, query, _none_stored).alone(["dddd"])  # past three: "a" goes
    kept.meaning(model, query, _none_stored).alone(["a"])
    assert model.embedded == ["a", "bb", "ccc", "dddd", "a"]
    other = CountingModel()  # the collection re-embedded with another model: nothing is reused
    kept.meaning(other, other.encode_query("q"), _none_stored).alone(["bb"])
    assert other.embedded == ["q", "bb"]


def test_stored_sentence_vectors_are_read_without_embedding_anything() -> None:
    """A passage's stored rows answer for its sentences; a row the model did not make (NaN),
    or rows made for another split of the passage (another rule, another language), none."""
    model = CountingModel()
    query = model.encode_query("q")
    model.embedded.clear()
    near, far = model.encode_documents(["x", "xxxxxxxx"])
    model.embedded.clear()
    nan = np.full(2, np.nan, dtype=np.float32)
    stored = {
        1: Stored(split_of(["one", "two"]), np.stack([near, far])),
        2: Stored(split_of(["three", "four"]), np.stack([far, nan])),
        # as many rows as sentences, but made when the passage split at another place
        3: Stored(split_of(["five six", "seven"]), np.stack([near, near])),
    }
    sentences = [(1, 0, "one"), (1, 1, "two"), (2, 0, "three"), (2, 1, "four")]
    sentences += [(3, 0, "five"), (3, 1, "six seven")]
    cosines = SentenceVectors().meaning(model, query, lambda ids: stored).stored(sentences)
    assert model.embedded == []
    assert cosines[3:] == [None, None, None]
    assert cosines[0] is not None and cosines[1] is not None and cosines[0] > cosines[1]
    assert cosines[1] == cosines[2]


def test_a_passage_ahead_of_the_crowd_is_judged_more_surely_an_answer() -> None:
    # One passage well ahead of ten alike (a question about an article that is there) against
    # passages on the subject nearly alike (one about a missing article); too few to tell: None.
    assert peak([0.9, *[0.5] * 10, 0.1]) == pytest.approx(0.4)
    assert peak([0.62, 0.61, 0.6, 0.6]) == pytest.approx(0.62 - 0.6033, abs=1e-3)
    assert peak([0.9, 0.5]) is None
    shipped = Judgement.load(DECLINES)
    ahead = dataclasses.replace(EVIDENCE, peak=0.4)
    alike = dataclasses.replace(EVIDENCE, peak=0.02)
    assert shipped.margin(ahead) > shipped.margin(alike)
    # Among a few articles' passages, which differ by their subjects, none stands out of a crowd.
    few = dataclasses.replace(EVIDENCE, passages=15)
    assert shipped.margin(dataclasses.replace(few, peak=0.4)) == pytest.approx(
        shipped.margin(dataclasses.replace(few, peak=0.02))
    )
