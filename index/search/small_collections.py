"""Declines in a collection too small for its own statistics: a question in another language
than the articles' held against text that cannot hold its answer (calibration.py's
`UnrelatedPassages`, docs/quality.md "Declines in a small collection")."""

from __future__ import annotations

import numpy as np

from index.embedding.calibration import Calibration
from index.search.interface import Backend, QueryModel
from index.search.language import Reading

__all__ = ["JUDGED_FROM", "against_unrelated"]

# From this many articles the judgement's margin is read beside the unrelated text; below, the
# unrelated text alone says whether to answer. The judgement reads the collection's own scores,
# and of one to four articles they are those of the question's own story or nearly: chosen on
# the fit and choose parts of XQuAD's cross-language files (Chinese, Russian, Arabic questions,
# 10 a collection and as many about other articles), the least shortfall below 0.90 answered
# and 0.90 declined, unrelated text alone / both: size 1 0.904 / 0.952 against 0.890 / 0.965,
# 2 0.898 / 0.948 against 0.869 / 0.956, 3 0.924 / 0.950 against 0.900 / 0.959, 4 0.894 /
# 0.923 against 0.846 / 0.948, 5 0.869 / 0.869 against 0.844 / 0.902
# (`python -m tools.bench.small_collections FILES --parts fit choose --sizes 1 2 3 4 5
# --questions 10`).
JUDGED_FROM = 5


def against_unrelated(
    margin: float,
    query: np.ndarray,
    candidates: dict[int, str],
    reading: Reading,
    languages: dict[str, int],
    articles: int,
    model: QueryModel,
    backend: Backend,
) -> float:
    """The margin for a question in another language than the articles', held against text
    that cannot hold the answer where the collection is too small for its own statistics to
    say much (fewer than `CHANCE_MIN_ARTICLES` articles): where the closest of the best ranked
    passages (`candidates`, their texts by id; the closest, as the threshold was fitted) is no
    closer to the question than passages of its length on other subjects, the articles answer
    nothing (a recipe's flour asked in Japanese of one English article on a tool
    library). Of fewer than `JUDGED_FROM` articles that is the whole margin; from there on
    the judgement's `margin` can decline too. Such a question
    shares only names and numbers with the articles, so the judgement has little else to
    go on; one in the articles' language has their words, and its declines held without
    this (XQuAD English, one article: 0.992 declined, 0.971 answered; with it 0.996 and
    0.933: tools/bench/small_collections.py)."""
    calibration: Calibration = model.calibration
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
    cosines = backend.cosines(query, list(candidates))
    if not cosines:  # removed meanwhile
        return margin
    best_id = max(cosines, key=lambda i: (cosines[i], -i))
    cosine = cosines[best_id]
    (tokens,) = model.token_counts([candidates[best_id]])
    lead = calibration.unrelated.lead(query, cosine, tokens, written_in, calibration.languages)
    if articles < JUDGED_FROM:
        return lead
    # Only the sign is read (relevant at 0 or above): either check declines.
    return min(margin, lead)
