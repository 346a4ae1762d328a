"""Fit the judgement of whether the best passage answers a question (search/relevance.py): a
logistic regression over the evidence retrieval gathers, kept as JSON beside the model's card.

Each set is indexed as `articlebot eval --abstention` indexes it (the first half of its
articles); its questions about those articles should be answered, those about the others
declined. A set marked `=whole` is indexed whole, as `articlebot eval --leave-one-out` indexes
it: each question should be answered, and declined when asked without its own article. The whole
collection is the size a member asks of, twice the half-indexed one: without it, the judgement
learns size only from collections smaller than the ones it is used on.

Every question is about an article of one part (`index/ops/eval_split.py`): the weights are
fitted on the *fit* articles' questions (and on every question of a set marked `=train`), the
ridge and the bias are chosen on the *choose* articles' questions, and the figures printed and
written are the counts of those two parts. The *report* articles' questions are asked with the
others and their evidence kept (their articles' titles tell `refuse_leaks` whether a `=train`
set holds an article another set reports on), but nothing here reads their labels or prints
their shares: the report part is measured once the judgement is fitted, with `articlebot eval
--part report` (docs/quality.md), so that no figure of it is in view while fitting. Every set
weighs the same, and within a set both kinds of question weigh the same. For each ridge of
`--ridges` the bias is moved, once for questions in the articles' language and once for the
others, to where the sets' shortfall on their choose questions is least: how far each set's
answered and declined shares fall below its targets, added up over the sets (answer `ANSWER` of
the questions about articles present, `ANSWER_NEWS` of news; decline `DECLINE` of the others,
`DECLINE_NEWS` of news, `DECLINE_ACROSS` where the question is in another language than the
articles). A sum
rather than the worst set: one small set (news chooses on 75 questions) then cannot move the
bias for all the others. The strongest ridge whose shortfall is within `RIDGE_SLACK` of the best
one's is kept (a judgement that generalises: among fits that lose little on questions they never
saw, the most regular).

    python -m tools.fit_declines SET... --features F.npz [--reuse] [--out FILE.json]
        [--ridges R,...] [--without FEATURE,...] [--sweep OFFSET,...]

`--sweep` prints, for each offset added to the fitted bias, every set's answered and declined
shares on its choose questions: what moving the one bias would buy one set and cost the others.
`--without` fits with some features' weights held at 0 (to see what a feature buys).

A SET is `FILE[@DATA_DIR][:START:STOP][+QUESTIONS_FROM][=train][=whole]` (START:STOP: articles
by position; QUESTIONS_FROM: the questions as worded in another file of the same ids; `=train`:
every question fits; `=whole`: every article indexed, as above). A `=train` set may not hold an
article that another set chooses or reports on. The features are kept in F.npz, so that
`--reuse` fits again asking only the sets it does not hold yet.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from index.ops.eval_split import PARTS, SEED, SHARES
from index.search.relevance import FEATURES
from tools.declines_evidence import (
    CHOOSE,
    FIELDS,
    FIT,
    Asked,
    feature_rows,
    kept_or_asked,
    parse,
)

__all__ = ["FIELDS", "fit", "main"]

ANSWER = 0.90
ANSWER_NEWS = 0.88
DECLINE = 0.85
DECLINE_NEWS = 0.70
DECLINE_ACROSS = 0.60
# The ridges tried (on the standardised weights; the sets' questions weigh their number in
# all): a ridge keeps features seen together (a foreign question's cosine as asked and as
# moved) from large weights of opposite signs that fit these questions and extrapolate badly.
RIDGES = (10.0, 100.0, 1_000.0, 10_000.0, 100_000.0)
RIDGE_SLACK = 0.01


def fit(
    x: np.ndarray, y: np.ndarray, weight: np.ndarray, ridge: float, held: np.ndarray
) -> tuple[np.ndarray, float]:
    """Weighted logistic regression with a ridge on the weights (not the bias), the columns
    `held` kept at 0: scikit-learn's, whose C is the inverse of the ridge."""
    model = LogisticRegression(C=1.0 / ridge, tol=1e-10, max_iter=10_000)
    model.fit(x[:, ~held], y, sample_weight=weight)
    weights = np.zeros(x.shape[1])
    weights[~held] = model.coef_[0]
    return weights, float(model.intercept_[0])


def counts(logit: np.ndarray, y: np.ndarray) -> dict[str, int]:
    """How many questions of each kind there are and how many were answered or declined."""
    return {
        "answerable": int((y == 1).sum()),
        "answered": int((logit[y == 1] >= 0).sum()),
        "unanswerable": int((y == 0).sum()),
        "declined": int((logit[y == 0] < 0).sum()),
    }


def shares(logit: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    c = counts(logit, y)
    answered = c["answered"] / c["answerable"] if c["answerable"] else 1.0
    declined = c["declined"] / c["unanswerable"] if c["unanswerable"] else 1.0
    return answered, declined


@dataclass(frozen=True)
class Judged:
    """A fitted judgement: the weights on standardised features and the standardisation."""

    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray

    def logits(self, features: np.ndarray) -> np.ndarray:
        # Evidence there is none of (NaN: no other story in a one-article collection, no crowd
        # among fewer than 100 passages) is read as the mean, as Judgement.margin reads it.
        z = (features - self.mean) / self.scale
        return np.where(np.isnan(z), 0.0, z) @ self.weights + self.bias


Sets = dict[str, tuple[np.ndarray, Asked]]  # each set's features and kept evidence


def shortfall(judged: Judged, sets: Sets, offset: float, part: int, across: bool) -> float:
    """How far the sets fall below their targets on their questions of `part`, added up over
    the sets (0: none below; < 0: below), among the sets whose questions are (`across`) or are
    not in another language than the articles', with `offset` added to their logits."""
    foreign = FEATURES.index("foreign")
    total = 0.0
    for name, (features, asked) in sets.items():
        rows = (asked.part == part) & (features[:, foreign] == across)
        if asked.across != across or not rows.any():
            continue
        answered, declined = shares(judged.logits(features[rows]) + offset, asked.labels[rows])
        answer, decline = targets(name, across)
        total += min(0.0, answered - answer) + min(0.0, declined - decline)
    return total


def targets(name: str, across: bool) -> tuple[float, float]:
    """The shares of a set's questions to answer and to decline."""
    if across:
        return ANSWER, DECLINE_ACROSS
    if "news" in name:
        return ANSWER_NEWS, DECLINE_NEWS
    return ANSWER, DECLINE


def fitted(sets: Sets, ridge: float, held: np.ndarray, weigh: dict[str, float]) -> Judged:
    """Weights fitted on the fit questions; the two biases chosen on the choose questions."""
    xs, ys, ws = [], [], []
    for name, (x, asked) in sets.items():
        for label in (0, 1):
            rows = (asked.part == FIT) & (asked.labels == label)
            if rows.any():
                xs.append(x[rows])
                ys.append(asked.labels[rows])
                ws.append(np.full(rows.sum(), weigh.get(name, 1.0) / rows.sum()))
    x, y, weight = np.vstack(xs), np.concatenate(ys), np.concatenate(ws)
    # A feature no fitted question has (no crowd among a few articles' passages) is read as 0
    # with a scale of 1: standardised, it is always the mean, and the file stays plain JSON.
    seen = ~np.isnan(x).all(axis=0)
    mean, scale = np.zeros(x.shape[1]), np.ones(x.shape[1])
    mean[seen], scale[seen] = np.nanmean(x[:, seen], axis=0), np.nanstd(x[:, seen], axis=0)
    scale[scale == 0] = 1.0
    z = np.where(np.isnan((x - mean) / scale), 0.0, (x - mean) / scale)
    weights, bias = fit(z, y, weight * len(y) / weight.sum(), ridge, held)
    judged = Judged(weights, bias, mean, scale)
    # One offset for questions in the articles' language, one for the others: the first moves
    # the bias, the second the weight of `foreign` (which is 1 for the others, 0 for the first).
    native = _best_offset(lambda o: shortfall(judged, sets, o, CHOOSE, False))
    across = _best_offset(lambda o: shortfall(judged, sets, o, CHOOSE, True))
    foreign = FEATURES.index("foreign")
    weights = weights.copy()
    weights[foreign] += (across - native) * scale[foreign]
    bias += native + (across - native) * mean[foreign]
    return Judged(weights, bias, mean, scale)


def _best_offset(short: Callable[[float], float]) -> float:
    """The offset of least shortfall, from -3 to 3 by hundredths. Shares move in steps, so
    several offsets tie: the middle of them, not the lowest, which would lean toward declining
    at the edge of the answer targets."""
    grid = np.linspace(-3, 3, 601)
    values = np.array([short(float(o)) for o in grid])
    return float(np.median(grid[values == values.max()]))


def choose_ridge(
    sets: Sets, ridges: list[float], held: np.ndarray, weigh: dict[str, float]
) -> tuple[float, Judged, dict[float, float]]:
    """The strongest ridge whose shortfall on the choose questions (native and cross-language
    sets together) is within `RIDGE_SLACK` of the best ridge's."""
    tried = {}
    for ridge in ridges:
        judged = fitted(sets, ridge, held, weigh)
        worst = sum(shortfall(judged, sets, 0.0, CHOOSE, a) for a in (False, True))
        tried[ridge] = (worst, judged)
        print(f"ridge {ridge:g}: shortfall on the choose questions {worst:+.3f}", flush=True)
    best = max(w for w, _ in tried.values())
    ridge = max(r for r, (w, _) in tried.items() if w >= best - RIDGE_SLACK)
    return ridge, tried[ridge][1], {r: round(w, 4) for r, (w, _) in tried.items()}


def refuse_leaks(sets: Sets) -> None:
    """Each article has one part in every set of a fit (a `=train` set's are all fit): an
    article that fits in one set and chooses or reports in another would be seen twice."""
    seen: dict[str, tuple[int, str]] = {}
    for name, (_, asked) in sets.items():
        for title, part in zip(map(str, asked.titles), asked.part, strict=True):
            first = seen.setdefault(title, (int(part), name))
            if first[0] != part:
                raise SystemExit(
                    f"{title!r} is a {PARTS[first[0]]} article in {first[1]} and a "
                    f"{PARTS[int(part)]} article in {name}; give a =train set a span of fit "
                    "articles only, and fit only files whose articles come in the same order "
                    "(index/ops/eval_split.py)."
                )


def _list(kind: type[Any]) -> Any:
    return lambda v: [kind(p) for p in v.split(",") if p]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", metavar="SET")
    parser.add_argument("--features", type=Path, required=True)
    parser.add_argument("--reuse", action="store_true", help="fit the features kept; ask nothing")
    parser.add_argument("--out", type=Path, help="write the judgement here")
    parser.add_argument("--model", default="multilingual-e5-small")
    parser.add_argument(
        "--weigh",
        type=lambda v: {k: float(w) for k, _, w in (p.partition("=") for p in v.split(","))},
        default={},
        help="weigh some sets more in the fit: NAME=FACTOR,...",
    )
    parser.add_argument(
        "--ridges", type=_list(float), default=list(RIDGES), help="the ridges tried: R,R,..."
    )
    parser.add_argument(
        "--without", type=_list(str), default=[], help="hold these features' weights at 0: F,F,..."
    )
    parser.add_argument(
        "--sweep",
        type=_list(float),
        default=[],
        help="print every set's choose shares with these offsets added to the bias: O,O,...",
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.without) - set(FEATURES))
    if unknown:
        raise SystemExit(f"No feature {unknown[0]!r}; name one of {', '.join(FEATURES)}.")
    if not args.ridges or min(args.ridges) <= 0:
        raise SystemExit("Give --ridges as positive numbers: 10,100,1000.")
    sets = [parse(s) for s in args.sets]
    data = kept_or_asked(sets, args.features, args.reuse)
    evidence: Sets = {s.name: (feature_rows(data[s.name].raw), data[s.name]) for s in sets}
    refuse_leaks(evidence)
    held = np.array([f in args.without for f in FEATURES])
    ridge, judged, tried = choose_ridge(evidence, args.ridges, held, args.weigh)

    figures: dict[str, dict[str, dict[str, int]]] = {}
    for name, (features, asked) in evidence.items():
        logit = judged.logits(features)
        figures[name] = {
            PARTS[n]: counts(logit[asked.part == n], asked.labels[asked.part == n])
            for n in (FIT, CHOOSE)
            if (asked.part == n).any()
        }
        print(name, figures[name])
    result = {
        "model": args.model,
        "features": list(FEATURES),
        "weights": [round(float(w), 6) for w in judged.weights],
        "bias": round(judged.bias, 6),
        "mean": [round(float(m), 6) for m in judged.mean],
        "scale": [round(float(s), 6) for s in judged.scale],
        "fitted_on": [
            {"set": s.name, "articles": list(s.articles) if s.articles else None, "train": s.train}
            | ({"whole": True} if s.whole else {})
            for s in sets
        ],
        # How it was fitted and chosen, so that the file can be fitted again as it was.
        "split": {"by": "index/ops/eval_split.py", "seed": SEED, "shares": dict(SHARES)},
        "ridge": ridge,
        "ridges_tried": {f"{r:g}": w for r, w in tried.items()},
        "without": args.without,
        "weighed": args.weigh,
        "targets": {
            "answer": ANSWER,
            "answer_news": ANSWER_NEWS,
            "decline": DECLINE,
            "decline_news": DECLINE_NEWS,
            "decline_across": DECLINE_ACROSS,
        },
        # Questions about the fit and choose articles of each set, and how many of them were
        # answered or declined (the report part's are measured apart: the module's docstring).
        "figures": figures,
    }
    print(json.dumps(dict(zip(FEATURES, result["weights"], strict=True)), indent=1))
    for offset in args.sweep:
        swept = {}
        for name, (features, asked) in evidence.items():
            rows = asked.part == CHOOSE
            if rows.any():
                answered, declined = shares(
                    judged.logits(features[rows]) + offset, asked.labels[rows]
                )
                swept[name] = {"answered": answered, "declined": declined}
        print(json.dumps({"offset": offset, "sets": swept}))
    if args.out:
        args.out.write_text(
            json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
