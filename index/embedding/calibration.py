"""How retrieval reads a model's scores: its calibration, read from the data file beside its card.

A model's cosines are not the scale the ranking and relevance rules were fitted on, nor do its
languages sit alike; what retrieval needs to know of that is one record, `Calibration`, made of
figures (each data file says where its figures were measured) and of the tables beside the card:
where the model puts each language (`LanguageTable`), and the fitted judgement of whether a best
passage answers (search/relevance.py). Nothing here knows a model by name: a model without a
table reads questions as they are, one without a judgement keeps the hand-tuned rule.
"""

from __future__ import annotations

import functools
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "Calibration",
    "LanguageTable",
    "UnrelatedPassages",
    "nearest_of_length",
    "read_calibration",
]


@dataclass(frozen=True)
class LanguageTable:
    """Where a model puts each language: for each language the question identifier names, the
    mean step from English of its question vectors, and the mean vector of its texts on no
    subject in particular (measured on CLDR's names of territories and languages, parallel in
    every language: tools/language_offsets.py makes the table, and says how)."""

    path: Path

    def step(self, asked_in: str, written_in: dict[str, int]) -> np.ndarray | None:
        """The mean step from the question vectors of language `written_in` (articles per
        language: their mean) to those of `asked_in`; None where the table has either not."""
        offsets = _table(self.path)[0]
        start = offsets.get(asked_in)
        ends = [(offsets.get(lang), n) for lang, n in written_in.items() if n > 0]
        if start is None or not ends or any(vector is None for vector, _ in ends):
            return None
        total = sum(n for _, n in ends)
        mean = sum(n * vector for vector, n in ends if vector is not None) / total
        return start - mean

    def centre(self, language: str) -> np.ndarray | None:
        """The mean passage vector of text in `language` on no subject in particular (CLDR's
        names of things): how close any question in that language comes to its texts by chance."""
        return _table(self.path)[1].get(language)


@functools.lru_cache(maxsize=4)
def _table(path: Path) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    with np.load(path) as data:
        offsets = data["offsets"].astype(np.float32)
        centres = data["centres"].astype(np.float32)
        languages = [str(lang) for lang in data["languages"]]
    return (
        {lang: offsets[i] for i, lang in enumerate(languages)},
        {lang: centres[i] for i, lang in enumerate(languages)},
    )


@dataclass(frozen=True)
class UnrelatedPassages:
    """Text that cannot hold a question's answer: paragraphs on many subjects and pieces of them,
    none of them the articles', embedded with the model (tools/unrelated_passages.py makes them
    from ../shared/train and says how). A question about an article finds one of its passages
    closer than the unrelated text nearest to it; one about nothing the articles say finds
    paragraphs on its own subject, or near it, as close as anything in them. How far the best
    passage's cosine stands above the mean of the question's `nearest` closest unrelated
    passages of about its length is read against the `threshold` fitted on other articles than
    the ones the passages came from. (Not their mean and spread: a question on an everyday
    subject, the weather, stands far from every encyclopedia paragraph alike, so their spread
    is small and any passage stood out of it. Of its length: e5 puts a short passage closer to
    a short question than a long one on the same subject.)"""

    path: Path
    # How much less than the threshold (fitted on questions in the text's language) a question
    # in another language than the articles' needs, the only kind retrieval asks this of: its
    # best passage meets it at a lower cosine than one in their language (chosen on XQuAD's
    # choose part).
    foreign_allowance: float = 0.0

    def lead(
        self,
        query: np.ndarray,
        best: float,
        tokens: int,
        written_in: str,
        languages: LanguageTable | None,
    ) -> float:
        """How far the best passage's cosine `best` with a question in another language than
        the articles' (vector `query`, moved toward theirs) stands above the mean of its cosines
        with the nearest unrelated passages of about its length (`tokens`, in the model's
        tokens), less what it needs (the threshold less the allowance): below 0, the question is
        about something else. The passages are English; for articles written in another
        language they are moved there first (the step between the two languages' centres), so
        that both sides of the comparison are the question against text in the articles'
        language."""
        table = _unrelated(self.path)
        vectors = table.vectors
        if written_in != "en" and languages is not None:
            vectors = _moved_to(self.path, written_in, languages)
        cosines = vectors @ query.astype(np.float32)
        near = nearest_of_length(cosines, table.lengths, tokens, table.nearest, table.band)
        return best - near - (table.threshold - self.foreign_allowance)


# Enough passages of a length for their nearest few to be on the question's subject, if any is.
BAND_LEAST = 200


def nearest_of_length(
    cosines: np.ndarray, lengths: np.ndarray, tokens: int, nearest: int, band: float
) -> float:
    """The mean of the `nearest` highest `cosines` among the passages whose `lengths` lie within
    `band` times `tokens`; where fewer than `BAND_LEAST` do (a passage longer or shorter than
    nearly all of them), among the `BAND_LEAST` closest to it in length."""
    ratio = np.abs(np.log(np.maximum(lengths, 1) / max(tokens, 1)))
    within = ratio <= np.log(band)
    if int(within.sum()) >= BAND_LEAST:
        chosen = cosines[within]
    else:
        chosen = cosines[np.argsort(ratio, kind="stable")[:BAND_LEAST]]
    count = min(nearest, len(chosen))
    return float(np.partition(chosen, len(chosen) - count)[-count:].mean())


@dataclass(frozen=True)
class UnrelatedTable:
    """The unrelated passages' file as read: what tools/unrelated_passages.py wrote."""

    vectors: np.ndarray  # unit rows, float32
    lengths: np.ndarray  # each passage's length in the model's tokens
    threshold: float
    nearest: int
    band: float


@functools.lru_cache(maxsize=2)
def _moved_to(path: Path, written_in: str, languages: LanguageTable) -> np.ndarray:
    """The unrelated passages moved from English to `written_in` (as they are where the table
    has no centre for it): made once a language, not for each question (10 ms of 8,773 rows,
    13 MB kept; a server's small collections are mostly of one language or two)."""
    vectors = _unrelated(path).vectors
    there, english = languages.centre(written_in), languages.centre("en")
    if there is None or english is None:
        return vectors
    moved = vectors + (there - english)
    return (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)


@functools.lru_cache(maxsize=2)
def _unrelated(path: Path) -> UnrelatedTable:
    with np.load(path) as data:
        if "band" not in data:
            raise ValueError(f"{path.name} reads another measure; make it again.")
        return UnrelatedTable(
            data["vectors"].astype(np.float32),
            data["lengths"].astype(np.int64),
            float(data["threshold"]),
            int(data["nearest"]),
            float(data["band"]),
        )


@dataclass(frozen=True)
class Calibration:
    """What retrieval needs to know of a model's scores, whichever runtime makes them. The
    defaults are the rules' own model: cosines as they are, languages alike, the hand rule."""

    # (slope, intercept) of the line that puts the model's cosines on the scale the ranking and
    # relevance rules were fitted on (search/retrieval.py).
    cosine_scale: tuple[float, float] = (1.0, 0.0)
    # Relevance a question in another language than the articles' needs less, beyond the rules'
    # own allowance (search/relevance.py): its cosines with them run lower.
    other_language_allowance: float = 0.0
    # Where the model puts each language; None: a question is never moved, nor asked more.
    languages: LanguageTable | None = None
    # The share of the step from the articles' language to the question's taken back from a
    # question in another language, and the share of the articles' mean vector with it.
    language_step: float = 0.0
    centre_share: float = 0.0
    # The share of how far a question's cosine with its language's centre lies above that of a
    # question in `background_language` (`background_cosine`) that the relevance rule asks more.
    background_share: float = 0.0
    background_language: str = ""
    background_cosine: float = 0.0
    # The fitted judgement of whether a best passage answers a question (search/relevance.py),
    # kept as data beside the model's card; None: the hand-tuned rule.
    judgement_file: Path | None = None
    # Text that cannot hold the answer, for collections too small to judge by their own
    # statistics; None: none (the judgement alone).
    unrelated: UnrelatedPassages | None = None

    def across_languages(
        self, asked_in: str, written_in: dict[str, int], centre: Callable[[], np.ndarray | None]
    ) -> np.ndarray | None:
        """What to take from the vector of a question asked in language `asked_in` before it
        searches passages written in `written_in` (articles per language) whose mean vector
        `centre` gives (read only where the model uses it: it costs a read of stored vectors);
        None: the vector as it is (a model that places languages apart no more than it must)."""
        if self.languages is None:
            return None
        step = self.languages.step(asked_in, written_in)
        away = None if step is None else self.language_step * step
        mean = centre()
        if mean is not None:
            away = self.centre_share * mean + (0.0 if away is None else away)
        return away

    def background(self, language: str, query: np.ndarray) -> float:
        """How much closer than a question of the reference language a question in `language`
        (vector `query`) comes, by chance, to any text in that language: the relevance rule asks
        this much more cosine of it. 0 for a model whose languages sit alike."""
        # The reference language is the scale itself: its rules were fitted on its own
        # questions, short ones in one-article collections among them, which a
        # question-by-question term would decline.
        if self.languages is None or language == self.background_language:
            return 0.0
        centre = self.languages.centre(language)
        if centre is None:
            return 0.0
        return self.background_share * (float(query @ centre) - self.background_cosine)


def read_calibration(
    path: Path, rules_scale: dict[str, Any], judgement: Path | None = None
) -> Calibration:
    """The calibration in the TOML file `path` (the tables it names lie beside it), with the
    fitted `judgement`. `rules_scale` is the `[cosine_scale]` of the model the rules were fitted
    on, onto whose cosines this model's are mapped."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    own = data["cosine_scale"]
    slope = float(own["slope"])
    intercept = float(rules_scale["other_article"]) - slope * float(own["other_article"])
    intercept -= float(own.get("below", 0.0))
    across = data.get("across_languages", {})
    background = data.get("background", {})
    table = across.get("table")
    unrelated = data.get("unrelated", {})
    return Calibration(
        cosine_scale=(slope, intercept),
        other_language_allowance=float(data.get("other_language", {}).get("allowance", 0.0)),
        languages=LanguageTable(path.with_name(table)) if table else None,
        language_step=float(across.get("step", 0.0)),
        centre_share=float(across.get("centre", 0.0)),
        background_share=float(background.get("share", 0.0)),
        background_language=str(background.get("language", "")),
        background_cosine=float(background.get("cosine", 0.0)),
        judgement_file=judgement,
        unrelated=(
            UnrelatedPassages(
                path.with_name(unrelated["table"]),
                float(unrelated.get("foreign_allowance", 0.0)),
            )
            if "table" in unrelated
            else None
        ),
    )
