"""Declines in a collection too small for its own statistics: a question in another language
than the articles' held against text that cannot hold its answer (calibration.py's
`UnrelatedPassages`, docs/quality.md "Declines in a small collection")."""

from __future__ import annotations

import numpy as np

from index.embedding.calibration import Calibration
from index.search.interface import Backend
from index.search.language import Reading

__all__ = ["against_unrelated"]


def against_unrelated(
    margin: float,
    query: np.ndarray,
    best_id: int,
    reading: Reading,
    languages: dict[str, int],
    calibration: Calibration,
    backend: Backend,
) -> float:
    """The judgement's margin for a question in another language than the articles', held
    against text that cannot hold the answer where the collection is too small for its own
    statistics to say much (fewer than `CHANCE_MIN_ARTICLES` articles): a best passage no
    closer to the question than paragraphs on other subjects answers nothing (a recipe's
    flour asked in Japanese of one English article on a tool library). Such a question
    shares only names and numbers with the articles, so the judgement has little else to
    go on; one in the articles' language has their words, and its declines held without
    this (XQuAD English, one article: 0.992 declined, 0.971 answered; with it 0.996 and
    0.933: tools/bench/small_collections.py)."""
    assert calibration.unrelated is not None
    written_in = max(languages, key=languages.__getitem__) if languages else "en"
    if calibration.languages is not None:
        # Asked in another language: the whole step between the two taken back, so that
        # the question meets the article's passages and the unrelated ones as one asked in
        # their language would (not the centre's share retrieval also takes: that is the
        # collection's own, and would weigh against its passages alone).
        step = calibration.languages.step(reading.asked_in, {written_in: 1})
        if step is not None:
            moved = query - step
            query = (moved / np.linalg.norm(moved)).astype(np.float32)
    cosine = backend.cosines(query, [best_id]).get(best_id)
    if cosine is None:  # removed meanwhile
        return margin
    lead = calibration.unrelated.lead(query, cosine, written_in, calibration.languages)
    # Only the sign is read (relevant at 0 or above): either check declines.
    return min(margin, lead)
