"""How a quote's sentences are weighed by meaning (answers/quote_choice.py, `closeness`): the words
and the stored sentence vectors put them in order, and only the first few are embedded alone."""

from __future__ import annotations

from collections.abc import Sequence

from index.answers.quote_choice import NOT_READ_ALONE, closeness
from index.search.ranking import Hit
from index.search.sentence_vectors import Meaning


def test_only_the_first_sentences_by_words_and_stored_meaning_are_embedded_alone() -> None:
    hits = [Hit(passage_id=7, score=1.0, dense=0.0, keyword=0.0)]
    items = [(0, place, text) for place, text in enumerate(["a", "b", "c", "d"])]
    words = [1.0, 0.2, 0.9, 0.0]
    # Stored closeness: "b" far ahead of the rest; "d" has no stored vector (taken as close as
    # the closest, so it is not passed over for want of one).
    stored = [0.0, 2.0, 0.1, None]
    embedded: list[str] = []

    def alone(texts: Sequence[str]) -> list[float]:
        embedded.extend(texts)
        return [{"a": 0.2, "b": 0.5, "c": 0.9, "d": 0.4}[t] for t in texts]

    meaning = Meaning(lambda sentences: list(stored), alone)
    close, stored_beyond, read = closeness(hits, items, words, meaning, stored_weight=1.0, alone=2)
    # words + stored beyond the best: a 1.0 - 2.0, b 0.2, c 0.9 - 1.9, d 0.0 (as the best)
    assert embedded == ["b", "d"]
    assert close[1] == 0.0 and close[3] == 0.4 - 0.5
    # The sentences not embedded rank below the last of those that were.
    assert close[0] == close[2] == 0.4 - 0.5 - NOT_READ_ALONE
    assert read == [0.0, 1.0, 0.0, 1.0]
    # As stored, beyond the closest stored ("d" taken as close as it).
    assert stored_beyond == [-2.0, 0.0, 0.1 - 2.0, 0.0]
