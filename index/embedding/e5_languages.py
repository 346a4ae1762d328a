"""Where multilingual-e5-small puts each language: the step from English of its question vectors.

e5 embeds a question's language along with its meaning, so a question meets passages written in
another language at a lower cosine, and the passages that win are those that lean, by chance,
toward the question's language. The table beside this module holds, for each language the
question identifier names, the mean step from English to that language (measured on CLDR's
names of territories and languages, parallel in every language: index/ops/language_offsets.py
makes it, and says how). Retrieval takes most of the step from a question's language to its
articles' back before it searches (`E5Calibration.across_languages`), and the relevance rule
reads a question's cosine with its language's centre (`E5Calibration.background`).
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

__all__ = ["OFFSETS_FILE", "centre", "step"]

OFFSETS_FILE = Path(__file__).with_name("multilingual-e5-small-languages.npz")


@functools.lru_cache(maxsize=1)
def _table() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    with np.load(OFFSETS_FILE) as data:
        offsets = data["offsets"].astype(np.float32)
        centres = data["centres"].astype(np.float32)
        languages = [str(lang) for lang in data["languages"]]
    return (
        {lang: offsets[i] for i, lang in enumerate(languages)},
        {lang: centres[i] for i, lang in enumerate(languages)},
    )


def _offset(language: str) -> np.ndarray | None:
    return _table()[0].get(language)


def centre(language: str) -> np.ndarray | None:
    """The mean passage vector of text in `language` on no subject in particular (CLDR's names
    of things): how close any question in that language comes to its texts by chance."""
    return _table()[1].get(language)


def step(asked_in: str, written_in: dict[str, int]) -> np.ndarray | None:
    """The mean step from the question vectors of language `written_in` (articles per
    language: their mean) to those of `asked_in`; None where the table has either not."""
    start = _offset(asked_in)
    weights = {lang: n for lang, n in written_in.items() if n > 0}
    ends = [(_offset(lang), n) for lang, n in weights.items()]
    if start is None or not ends or any(vector is None for vector, _ in ends):
        return None
    total = sum(n for _, n in ends)
    mean = sum(n * vector for vector, n in ends if vector is not None) / total
    return start - mean
