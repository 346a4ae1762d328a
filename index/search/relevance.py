"""Whether the best passage found is about the question at all, or the bot should decline.

A model with a fitted judgement (multilingual-e5-small, the default) decides with `Judgement`:
a logistic regression over the `Evidence` retrieval gathers of the best passage (`FEATURES`:
its cosine with the question as searched, its lead over the best passage of another story, how
far it stands out from the next closest, the share of the question's word weight its best
sentence and its story hold beyond chance, the collection's size, the question's language
against the articles'...), fitted by `python -m tools.fit_declines` on the fit part of each
evaluation file and chosen on its choose part (`index/ops/eval_split.py`), and kept as data
beside the model's card; a feature the fit leaves out (the cosine as asked, which for a question
in the articles' language is the cosine as searched again) has the weight 0 there. Its logit is
the margin: at 0 or above the bot answers.

A model without one (all-MiniLM-L6-v2, the model of earlier releases) keeps the hand rule it
was calibrated with (`relevance`, `min_relevance`): the best passage is relevant enough when
its cosine with the question, plus the share of the question's word weight that one of its
sentences holds, plus the share that its whole story holds, reaches a threshold that grows
with the log of the passages searched (the best of more unrelated passages scores higher by
chance alone), calibrated on SQuAD v1.1 dev articles and CNN stories, indexed and not, at four
collection sizes (`articlebot eval --abstention`).

Both read word weights as idf, and a word that no passage holds weighs most, so one common
word cannot pass for coverage: "who founded Warsaw?" asked of articles that never name Warsaw
is declined however often "founded" occurs. Each share counts only beyond what any sentence or
story of that length would hold by chance (`beyond_chance`): in a language whose words are
syllables (Vietnamese), or one read in pairs of characters, an unrelated story holds many of a
question's words.
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "FEATURES",
    "Evidence",
    "Judgement",
    "beyond_chance",
    "min_relevance",
    "peak",
    "relevance",
    "word_evidence",
]

# Chosen on a grid for the smallest shortfall against all targets at once (answer 0.9 of the
# questions about stories present, decline 0.8 of those about stories absent, on every set).
# A penalty for question words that no passage holds, and the share of the top story among the
# best hits, separated news a little better but failed on one-article collections.
COVERAGE_WEIGHT = 0.5
STORY_WEIGHT = 0.2
RELEVANCE_BASE = 0.34
RELEVANCE_PER_LOG_PASSAGE = 0.06
# A question in another language meets the articles with a lower cosine and shares only its
# names and numbers with them, so it needs less to count as found. With all-MiniLM-L6-v2 on
# XQuAD, English articles and German questions: answered 0.28 -> 0.50 of those about articles
# present, declined 0.99 -> 0.95 of those about articles absent (English questions: 0.96
# declined). A model may need more (`Calibration.other_language_allowance`, added to this).
OTHER_LANGUAGE_ALLOWANCE = 0.2
# Past this many passages the threshold is not extrapolated beyond what was calibrated.
RELEVANCE_SIZE_CAP = 2_500


# A question of one keyword ("help") is covered whole by any passage that holds it; that is
# half the evidence of two words found together. On news, this declines 0.77 rather than 0.72
# of questions about missing stories, for 0.6 points fewer of the others answered.
ONE_WORD_SHARE = 0.5


# In a language read in pairs of characters (analysis.py: Chinese, Japanese, Korean, Thai...),
# a pair is weaker evidence than a word: a story holds most pairs of a question on another
# subject. XQuAD Chinese with half the articles indexed, questions about the others: the
# relevance rule's median margin 0.24 against -0.11 to -0.16 in Arabic, German and English.
PAIRS_LEXICAL_WEIGHT = 0.5


# Chance is read from the collection's own word counts, and among a few articles a word they
# all hold says more of their subject than of their language: "Which gang was targeted?" about
# the sample article alone (14 passages) would count none of its words, and 0.09 of the
# questions about four SQuAD articles were declined. From this many articles on, it counts:
# half of each set indexed (24 to 48 articles), answered / declined, Vietnamese 0.99 / 0.70 ->
# 0.98 / 0.84, Greek 0.96 / 0.92 -> 0.94 / 0.95, German 0.96 / 0.94 -> 0.95 / 0.96, Arabic
# 0.91 / 0.94 -> 0.90 / 0.96, SQuAD 0.99 / 0.87 -> 0.98 / 0.90, news 0.94 / 0.66 -> 0.94 /
# 0.67, English 0.99 / 0.94 -> 0.99 / 0.95, Chinese within 0.01.
CHANCE_MIN_ARTICLES = 10


def beyond_chance(share: float, chance: float) -> float:
    """The part of a share of the question's word weight that chance does not explain, where
    any text would hold `chance` of it: 0 at chance, 1 for all of it."""
    if chance >= 1.0:
        return 0.0
    return max(0.0, (share - chance) / (1.0 - chance))


def word_evidence(
    weights: dict[str, float],
    coverage: float,
    story_words: set[str],
    story_length: int,
    articles: int,
) -> tuple[float, float]:
    """The share of the question's word weight (idf `weights`) that the best sentence holds
    (`coverage`) and that its story of `story_length` passages holds, each beyond what chance
    would hold among `articles` articles (from `CHANCE_MIN_ARTICLES` on)."""
    total = sum(weights.values()) or 1.0
    in_story = sum(w for t, w in weights.items() if t in story_words) / total
    if articles < CHANCE_MIN_ARTICLES:
        return coverage, in_story
    # What any passage, or any story of this one's length, would hold of the question's words
    # by chance: BM25's idf is ln((passages + 1) / (holding + 0.5)), so e^-idf is the share of
    # passages that hold a word.
    held = {t: math.exp(-w) for t, w in weights.items()}
    chance = sum(w * held[t] for t, w in weights.items()) / total
    story = sum(w * (1 - (1 - held[t]) ** story_length) for t, w in weights.items()) / total
    return beyond_chance(coverage, chance), beyond_chance(in_story, story)


def relevance(
    dense: float, coverage: float, story: float, words: int, *, pairs: bool = False
) -> float:
    """How surely the best passage is about the question.

    `dense` is its cosine with the question; `coverage` the largest share of the question's word
    weight one of its sentences holds; `story` the share its whole article holds; `words` how
    many distinct keywords the question has; `pairs`: its words are pairs of characters.
    """
    lexical = COVERAGE_WEIGHT * coverage + STORY_WEIGHT * story
    if pairs:
        lexical *= PAIRS_LEXICAL_WEIGHT
    return dense + (lexical if words > 1 else ONE_WORD_SHARE * lexical)


def min_relevance(passages: int, *, native: bool = True) -> float:
    """The relevance the best passage needs, among this many passages searched; `native`: the
    question is written in a language of the articles."""
    size = min(max(passages, 1), RELEVANCE_SIZE_CAP)
    needed = RELEVANCE_BASE + RELEVANCE_PER_LOG_PASSAGE * math.log(size)
    return needed if native else needed - OTHER_LANGUAGE_ALLOWANCE


# The evidence a question has that its best passage answers it, and the one fitted judgement
# that weighs it (a logistic regression, its weights data beside the model's card).

# The judgement reads a collection's size from this many passages up: questions in another
# language than the articles' were fitted in collections of 120 passages and more, and below
# that their size extrapolated into answering anything (a Spanish question on no subject of
# three English articles, 15 passages).
JUDGED_SIZE_FLOOR = 100

# The crowd a passage stands out from: the next closest passages, this many of them.
PEAK_OF = 10

FEATURES = (
    "cosine",  # the best passage's cosine with the question as asked, on the rules' scale
    "moved",  # ... with the question as searched (moved toward the articles' language)
    "story_margin",  # its score above the best passage of another story
    # How far the closest passage stands out from the next closest (`PEAK_OF`): a question about
    # an article that is there finds one passage well ahead of the crowd, while one about a
    # missing article finds several on the subject nearly alike.
    "peak",
    "coverage",  # the best sentence's share of the question's word weight, beyond chance
    "story",  # the story's share of it, beyond chance
    "one_word",  # the question has one keyword or none
    "log_passages",  # how many passages were searched (log)
    "background",  # how far the question's language leans toward any text of it (e5)
    "english",  # the question and the articles are English
    "pairs",  # the question's words are read in pairs of characters
    "pairs_coverage",  # coverage where words are pairs (weaker evidence)
    "foreign",  # the question is in a language no article is written in ...
    # ... where the evidence weighs otherwise: its words are only names and numbers, and its
    # cosines run lower. (Its cosine as asked has no weight of its own: beside the cosine as
    # moved, the two fitted opposite weights, which answered a question far from every passage.)
    "foreign_moved",
    "foreign_story_margin",
    "foreign_log_passages",
)


def peak(cosines: Iterable[float]) -> float | None:
    """How far the closest of some passages' cosines lies above the mean of the `PEAK_OF` next
    closest; None below three passages."""
    closest = heapq.nlargest(PEAK_OF + 1, cosines)
    if len(closest) < 3:
        return None
    return closest[0] - sum(closest[1:]) / (len(closest) - 1)


@dataclass(frozen=True)
class Evidence:
    """What is known of the best passage found for a question (see `FEATURES`)."""

    cosine: float
    moved: float
    story_margin: float | None  # None: one article, no other story to lead
    peak: float | None  # None: too few passages to stand out from
    coverage: float
    story: float
    words: int
    passages: int
    background: float
    native: bool
    english: bool
    pairs: bool

    def features(self) -> list[float]:
        foreign = 0.0 if self.native else 1.0
        pairs = 1.0 if self.pairs else 0.0
        log_passages = math.log(min(max(self.passages, JUDGED_SIZE_FLOOR), RELEVANCE_SIZE_CAP))
        # Evidence there is none of is NaN, which the judgement reads as its fitting data's mean.
        margin = math.nan if self.story_margin is None else self.story_margin
        # Among fewer passages the closest stands out of no crowd: three unrelated articles'
        # passages differ by their subjects, and a question on none of them found one "ahead"
        # (a Spanish question on no subject of three English articles, 15 passages).
        crowd = self.passages >= JUDGED_SIZE_FLOOR
        peak = self.peak if self.peak is not None and crowd else math.nan
        return [
            self.cosine,
            self.moved,
            margin,
            peak,
            self.coverage,
            self.story,
            1.0 if self.words <= 1 else 0.0,
            log_passages,
            self.background,
            1.0 if self.english else 0.0,
            pairs,
            pairs * self.coverage,
            foreign,
            foreign * self.moved,
            foreign * margin,
            foreign * log_passages,
        ]


@dataclass(frozen=True)
class Judgement:
    """Whether the best passage answers a question: a logistic regression over `Evidence`,
    fitted by `python -m tools.fit_declines` and kept as data (JSON) beside the model's card.
    Its logit is the margin: at 0 or above the bot answers."""

    weights: tuple[float, ...]
    bias: float
    mean: tuple[float, ...]  # features are standardised with the fitting data's mean ...
    scale: tuple[float, ...]  # ... and spread, so that the weights compare

    def margin(self, evidence: Evidence) -> float:
        x = evidence.features()
        return self.bias + sum(
            w * (v - m) / s
            for w, v, m, s in zip(self.weights, x, self.mean, self.scale, strict=True)
            if not math.isnan(v)  # no evidence: the fitting data's mean, a standardised 0
        )

    @classmethod
    def load(cls, path: Path) -> Judgement:
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path.name} was fitted on other features; fit it again.")
        return cls(
            tuple(data["weights"]), float(data["bias"]), tuple(data["mean"]), tuple(data["scale"])
        )
