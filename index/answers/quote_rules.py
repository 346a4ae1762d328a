"""How the sentences an answer quotes are chosen (quote_choice.py reads them, compose.py
composes the answer): which are embedded alone, and what a character of quote costs, each rule
with the figures it was set by."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RULES", "QuoteRules"]


@dataclass(frozen=True)
class QuoteRules:
    """How the sentences an answer quotes are chosen: which are embedded alone, and what a
    character of quote costs. Set by `python -m tools.bench.quotes` (its figures beside
    each rule); the weights that read the sentences are fitted data of their own."""

    # Embedding a sentence alone costs about 20 ms on one core, so only the `alone` sentences
    # put first by their words (their share of the question's word weight, plus `kind` when
    # they hold what the question asks for, plus `passage_prior` times their passage's score
    # over the best one's) and by their stored vectors (`stored_meaning` times their stored
    # cosine beyond the best) are; the rest rank below the last of them in meaning. On the same
    # questions (measured with the hand scores that chose quotes before the fitted chances),
    # `alone` 2 / 3 / 5 / every sentence: English 0.871 / 0.870 / 0.873 / 0.873,
    # German 0.812 / 0.815 / 0.817 / 0.816, Arabic 0.776 / 0.776 / 0.776 / 0.776; across
    # languages, where the words say less, Chinese questions 0.533 / 0.540 / 0.555 / 0.557,
    # Arabic 0.475 / 0.482 / 0.491 / 0.494. The stored vectors alone chose worse (Chinese
    # questions 0.487, Arabic 0.429).
    # A question in another language than the articles' reads every sentence alone: retrieval
    # has embedded each sentence of its best passages already to rank them
    # (search/closest_sentence.py `BY_SENTENCE`, more than the answer quotes from), so they
    # cost nothing more.
    # XQuAD, English articles, choose / report part, 3 sentences -> every one: Chinese
    # questions 0.651 / 0.593 -> 0.658 / 0.604, Arabic 0.602 / 0.561 -> 0.617 / 0.564, Russian
    # 0.710 / 0.682 -> 0.732 / 0.693.
    passage_prior: float = 2.0
    kind: float = 0.3
    stored_meaning: float = 1.0
    alone: int = 2
    alone_across: int = 1_000  # more than a passage's sentences: every one
    # A run of sentences is worth the chances that one of them holds the answer, less
    # `length_cost` per 100 characters: the quote is the run worth most, and a run from another
    # passage joins it when it is worth more than nothing and the answer stays within `budget`.
    # The highest cost at which every set keeps, on the questions it is set on (the fit and
    # choose parts, `index/ops/eval_split.py`), within a point of its best containment: a
    # member reads the answer, and past that point length buys less than it costs. Set on /
    # report / median characters (`python -m tools.bench.quotes --grid length`), 0.03 / 0.045 /
    # 0.06 / 0.08: XQuAD English 0.907/0.896/267, 0.902/0.893/252, 0.901/0.900/241,
    # 0.895/0.893/232; German 0.841/0.821/305, 0.837/0.814/273, 0.834/0.818/258,
    # 0.832/0.814/246; Arabic 0.813/0.789/323, 0.812/0.775/287, 0.811/0.764/262,
    # 0.803/0.764/246; Turkish 0.831/0.807/302, 0.827/0.804/281, 0.825/0.793/262,
    # 0.809/0.782/248; Greek 0.823/0.793/302, 0.816/0.796/286, 0.815/0.786/266,
    # 0.803/0.786/254 (Russian, Vietnamese, Chinese and news within a point up to 0.06).
    length_cost: float = 0.06
    # A question in another language than the articles' shares only its names and numbers with
    # them, and the fitted weights, which read words as the training questions (in the
    # articles' language) use them, choose worse for it (English articles, Chinese questions:
    # the likeliest sentence holds a gold answer 0.518 of the time, 0.561 by the hand scores).
    # Its chances are the hand scores (`across_weights`) times `across_sharpness`, and its
    # quote costs `length_cost_across`: English articles with Chinese / Arabic / Russian
    # questions (fit half / check half / median) 0.590/0.516/292, 0.497/0.504/290,
    # 0.665/0.622/275 (sharpness 4: 0.576/0.496/319, 0.494/0.484/324, 0.668/0.608/320; 16:
    # 0.581/0.516/254, 0.481/0.500/256, 0.646/0.616/240).
    length_cost_across: float = 0.08
    across_sharpness: float = 8.0
    across_meaning: float = 0.5  # the hand score's weight of the cosine embedded alone
    # A quote shorter than this many characters (a clause, a heading-like line) takes in the
    # likelier of the sentences beside it while it stays within `budget` characters. At a cost
    # of 0.05, 0 / 80 / 120 / 150 (with the 17 weights before `adds_to_*` and `phrases`): SQuAD
    # (2,000 questions) 0.825/0.817/239, 0.827/0.818/244,
    # 0.827/0.820/259, 0.830/0.828/278; XQuAD English (the first fit's weights)
    # 0.899/0.882/223, 0.900/0.882/226, 0.903/0.887/250, 0.903/0.887/265.
    least_quote: int = 120
    budget: int = 440


RULES = QuoteRules()
