"""Which part of an evaluation file each article belongs to: fit, choose or report.

A judgement fitted on some questions and reported on the same ones looks better than it is, and
so does a setting chosen on the questions it is reported on. Every article of a file is
therefore given one part: weights are fitted on the questions about the *fit* articles, settings
(a ridge, a bias, a quote rule's cost) are chosen on those about the *choose* articles, and
figures are reported on the questions about the *report* articles, which no fit and no choice
saw.

The parts are drawn within each half of the file, the half `eval --abstention` indexes and the
other, so that each part holds questions of both kinds (to answer and to decline) in proportion:
a half's articles are ordered by a seeded hash of their titles, the first half of them fit, the
next quarter choose, the rest report. The part depends only on the titles and their order, so
files of the same articles in the same order get the same parts: XQuAD's languages and SQuAD
v1.1's development set share their 48 articles, and a question never fits in one of them and
reports in another. A file of some of them in another order (SQuAD 2.0's half of the
development set) draws its own parts; `tools/fit_declines.py` refuses to fit on files whose
parts disagree.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

__all__ = ["PARTS", "SEED", "SHARES", "Part", "parts"]

Part = Literal["fit", "choose", "report"]
PARTS: tuple[Part, ...] = ("fit", "choose", "report")
# Half to fit, a quarter to choose, a quarter to report: weights need the most questions, and a
# quarter of XQuAD's 48 articles still reports a share on about 300 questions.
SHARES: dict[Part, float] = {"fit": 0.50, "choose": 0.25, "report": 0.25}
SEED = 0


def parts(titles: Sequence[str], seed: int = SEED) -> list[Part]:
    """The part of each article, by position, of a file whose articles have these titles (as
    `load_squad` reads them)."""
    half = (len(titles) + 1) // 2
    out: list[Part] = ["fit"] * len(titles)
    for span in (range(half), range(half, len(titles))):
        ranked = sorted(span, key=lambda i: (_hash(titles[i], seed), i))
        fit = round(SHARES["fit"] * len(ranked))
        choose = round((SHARES["fit"] + SHARES["choose"]) * len(ranked))
        for rank, i in enumerate(ranked):
            out[i] = "fit" if rank < fit else "choose" if rank < choose else "report"
    return out


def _hash(title: str, seed: int) -> bytes:
    return hashlib.sha256(f"{seed}\n{title}".encode()).digest()
