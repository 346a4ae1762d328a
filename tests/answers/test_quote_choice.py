"""How a quote's sentences are chosen from their chances (answers/quote_choice.py), and how the
weights that give the chances are fitted (tools/fit_quotes.py) and shipped."""

from __future__ import annotations

import dataclasses

import numpy as np

from index.answers.quote_choice import (
    FEATURES,
    Evidence,
    QuoteWeights,
    _words_read,
    best_run,
    table,
)
from tools.fit_quotes import fit

# Three sentences of one passage (rank 0), then two of the next passage (rank 1).
PLACES = [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
LENGTHS = [100, 100, 100, 100, 100]


def test_a_sure_sentence_is_quoted_alone() -> None:
    value, run = best_run(PLACES, LENGTHS, [0.05, 0.9, 0.05, 0.0, 0.0], 0.05, 440)
    assert run == [1]
    assert abs(value - (0.9 - 0.05 * 101 / 100)) < 1e-9


def test_doubt_between_neighbours_quotes_both() -> None:
    _, run = best_run(PLACES, LENGTHS, [0.45, 0.45, 0.0, 0.05, 0.05], 0.05, 440)
    assert run == [0, 1]


def test_a_run_keeps_to_one_passage_and_to_neighbours() -> None:
    # The last sentence of one passage and the first of the next are not neighbours.
    _, run = best_run(PLACES, LENGTHS, [0.0, 0.0, 0.5, 0.5, 0.0], 0.01, 440)
    assert run in ([2], [3])
    # Sentences 0 and 2 of a passage whose sentence 1 was not a candidate are not a run.
    _, run = best_run([(0, 0), (0, 2)], [100, 100], [0.5, 0.5], 0.01, 440)
    assert len(run) == 1


def test_a_run_stays_within_the_budget_but_one_long_sentence_is_still_quoted() -> None:
    _, run = best_run(PLACES, LENGTHS, [0.3, 0.3, 0.3, 0.05, 0.05], 0.0, 250)
    assert len(run) == 2
    _, run = best_run([(0, 0)], [900], [1.0], 0.05, 440)
    assert run == [0]


def test_a_long_sentence_that_holds_the_answer_is_not_priced_out_by_short_ones() -> None:
    # A 2,000-character sentence with most of the chance, in one passage, against two short
    # ones of another: priced whole it would be worth less than nothing (0.7 - 0.06 x 20).
    places, lengths = [(0, 0), (1, 0), (1, 1)], [2_000, 80, 80]
    value, run = best_run(places, lengths, [0.7, 0.15, 0.15], 0.06, 440)
    assert run == [0] and value > 0.3


def test_neighbours_are_read_into_each_sentence_row() -> None:
    evidence = Evidence(
        places=[(0, 0), (0, 1), (1, 0)],
        lengths=[10, 20, 30],
        words=[0.2, 0.8, 0.5],
        kind=[0.0, 1.0, 0.0],
        passage=[1.0, 1.0, 0.7],
        alone=[-0.1, 0.0, -0.6],
        stored=[0.0, -0.2, -0.3],
        read_alone=[1.0, 1.0, 0.0],
        with_before=[0.2, 0.9, 0.5],
        with_after=[0.9, 0.8, 0.5],
        phrases=[0.0, 0.5, 0.0],
    )
    rows = table(evidence)
    column = {name: rows[:, i] for i, name in enumerate(FEATURES)}
    assert list(column["words_after"]) == [0.8, 0.0, 0.0]  # none after: no words
    assert list(column["words_before"]) == [0.0, 0.2, 0.0]
    # None before: the farthest meaning of any candidate.
    assert list(column["alone_before"]) == [-0.6, -0.1, -0.6]
    # The one sentence of each passage above its others; a passage of one sentence has it.
    assert list(column["most_words"]) == [0.0, 1.0, 1.0]
    assert list(column["closest_stored"]) == [1.0, 0.0, 1.0]
    # Two sentences equally close say nothing of which is the one.
    tied = table(dataclasses.replace(evidence, alone=[0.0, 0.0, -0.6]))
    assert list(tied[:, FEATURES.index("closest_alone")]) == [0.0, 0.0, 1.0]
    assert list(column["opens_passage"]) == [1.0, 0.0, 1.0]
    # What a sentence adds to its neighbour's words; all of its own where it has none.
    assert np.allclose(column["adds_to_before"], [0.2, 0.7, 0.5])
    assert np.allclose(column["adds_to_after"], [0.1, 0.8, 0.5])


def test_words_are_read_alone_with_each_neighbour_and_as_phrases() -> None:
    # The question's words split over two neighbours: each holds a third or two, together all.
    items = [(0, 0, "aristotle wrote physics"), (0, 1, "forced motion is unnatural")]
    weights = {"forced": 1.0, "motion": 1.0, "aristotle": 1.0}
    alone, before, after, phrases = _words_read(
        "forced motion aristotle", items, weights, str.split
    )
    assert np.allclose(alone, [1 / 3, 2 / 3])
    assert np.allclose(before, [1 / 3, 1.0])
    assert np.allclose(after, [1.0, 2 / 3])
    # "forced motion" is one of the question's two neighbouring pairs, held as neighbours.
    assert phrases == [0.0, 0.5]


def test_the_shipped_weights_read_every_feature_and_give_chances() -> None:
    weights = QuoteWeights.read()  # fails when the file was fitted on other features
    assert weights.weights.shape == weights.mean.shape == (len(FEATURES),)
    evidence = Evidence(
        places=[(0, 0), (0, 1)],
        lengths=[120, 120],
        words=[0.9, 0.1],
        kind=[0.0, 0.0],
        passage=[1.0, 1.0],
        alone=[0.0, -0.4],
        stored=[0.0, -0.3],
        read_alone=[1.0, 1.0],
        with_before=[0.9, 1.0],
        with_after=[1.0, 0.1],
        phrases=[0.5, 0.0],
    )
    chances = weights.chances(table(evidence))
    assert abs(chances.sum() - 1.0) < 1e-9
    # Holding the question's words and being the closest in meaning is what a right sentence is.
    assert chances[0] > 0.7


def test_fitting_learns_which_feature_marks_the_right_sentence() -> None:
    rng = np.random.default_rng(3)
    questions, per = 200, 5
    rows = rng.normal(size=(questions * per, len(FEATURES)))
    group = np.repeat(np.arange(questions), per)
    right = np.zeros(questions * per)
    for q in range(questions):
        members = np.arange(q * per, (q + 1) * per)
        right[members[np.argmax(rows[members, 0] + 0.3 * rng.normal(size=per))]] = 1.0
    fitted = fit(rows, right, group)
    weights = fitted["weights"]
    assert weights[0] > 3 * np.abs(weights[1:]).max()
    assert fitted["likeliest_holds"] > 0.8
