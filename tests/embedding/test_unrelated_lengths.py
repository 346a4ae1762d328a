"""The unrelated passages a question's best passage is held against are those of about its
length (calibration.py's `nearest_of_length`): e5 puts a short passage closer to a short
question than a long one on the same subject, so a one-sentence news paragraph measured against
long encyclopedia paragraphs would stand out for any question near its subject."""

from __future__ import annotations

import numpy as np
import pytest

from index.embedding.calibration import BAND_LEAST, nearest_of_length


def _table(short: float, long: float) -> tuple[np.ndarray, np.ndarray]:
    """As many short pieces (40 tokens) as long paragraphs (200 tokens), each kind at one cosine."""
    count = 2 * BAND_LEAST
    cosines = np.array([short] * count + [long] * count, dtype=np.float32)
    lengths = np.array([40] * count + [200] * count)
    return cosines, lengths


def test_a_short_passage_is_held_against_short_unrelated_text_and_a_long_one_against_long() -> None:
    cosines, lengths = _table(short=0.82, long=0.78)
    assert nearest_of_length(cosines, lengths, 45, 20, 1.5) == pytest.approx(0.82, abs=1e-6)
    assert nearest_of_length(cosines, lengths, 180, 20, 1.5) == pytest.approx(0.78, abs=1e-6)


def test_a_passage_of_a_length_few_unrelated_ones_have_is_held_against_the_closest_in_length() -> (
    None
):
    cosines, lengths = _table(short=0.82, long=0.78)
    # 500 tokens: no unrelated passage within 1.5 times; the longest ones stand in.
    assert nearest_of_length(cosines, lengths, 500, 20, 1.5) == pytest.approx(0.78, abs=1e-6)
    # Between the two (80 tokens: neither within 1.5 times), the closest in length by ratio.
    assert nearest_of_length(cosines, lengths, 80, 20, 1.5) == pytest.approx(0.82, abs=1e-6)


def test_the_nearest_are_the_highest_cosines_among_those_of_the_length() -> None:
    cosines, lengths = _table(short=0.70, long=0.78)
    cosines[:20] = 0.90  # twenty short pieces on the question's subject
    assert abs(nearest_of_length(cosines, lengths, 40, 20, 1.5) - 0.90) < 1e-6
    assert abs(nearest_of_length(cosines, lengths, 40, 40, 1.5) - 0.80) < 1e-6
