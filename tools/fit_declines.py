"""Fit the judgement of whether the best passage answers a question (search/relevance.py): a
logistic regression over the evidence retrieval gathers, kept as JSON beside the model's card.

Each set is indexed as `articlebot eval --abstention` indexes it (the first half of its
articles); its questions about those articles should be answered, those about the others
declined. A set's articles are split again: questions about the first half of each half fit the
weights, the rest check them. A set marked `=whole` is indexed whole, as `articlebot eval
--leave-one-out` indexes it: each question should be answered, and declined when asked without
its own article; questions about the same articles fit and check as in the half-indexed sets.
The whole collection is the size a member asks of, twice the half-indexed one: without it, the
judgement learns size only from collections smaller than the ones it is used on. Training data
(../shared/train) fits only. Every set weighs the same, and within a set both kinds of question
weigh the same; the bias is then moved to the point where the set furthest below its targets is
least so (answer `ANSWER` of the questions about articles present, decline `DECLINE` of the
others, `DECLINE_NEWS` of news, `DECLINE_ACROSS` where the question is in another language than
the articles), once for questions in the articles' language and once for the others, whose
targets differ.

    python -m tools.fit_declines SET... --features F.npz [--reuse] [--out FILE.json]
        [--sweep OFFSET,...]

`--sweep` prints, for each offset added to the fitted bias, every set's answered and declined
shares (fit and check rows together): what moving the one bias would buy one set and cost the
others.

A SET is `FILE[@DATA_DIR][:START:STOP][+QUESTIONS_FROM][=train][=whole]` (START:STOP: articles
by position; QUESTIONS_FROM: the questions as worded in another file of the same ids; `=train`:
fitting only; `=whole`: every article indexed, as above). The features are kept in F.npz, so
that `--reuse` fits again asking only the sets it does not hold yet.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from index.library import Library
from index.ops import evaluate as ev
from index.search.relevance import FEATURES, Evidence
from index.settings import model_cache

ANSWER = 0.90
DECLINE = 0.85
DECLINE_NEWS = 0.80
DECLINE_ACROSS = 0.60
# The evidence kept for each question, as `Evidence` holds it: features are made from it at
# fitting time, so that a change of features made from the same fields needs no asking again
# (a new field does: `--reuse` refuses evidence kept without it).
FIELDS = tuple(f.name for f in dataclasses.fields(Evidence))
# Ridge on the standardised weights (the sets' questions weigh their number in all): keeps
# features seen together (a foreign question's cosine as asked and as moved) from large weights
# of opposite signs that fit these questions and extrapolate badly. At 1 / 100 / 1,000, checked
# answered / declined, English articles with Chinese questions 0.894 / 0.498, 0.894 / 0.562,
# 0.903 / 0.509; with Arabic ones 0.813 / 0.634, 0.832 / 0.683, 0.852 / 0.638; news 0.871 / 0.775,
# 0.871 / 0.775, 0.871 / 0.800.
RIDGE = 100.0
QUESTIONS_PER_SET = 800


@dataclass(frozen=True)
class Set:
    name: str
    file: str
    data_dir: Path
    articles: tuple[int, int] | None
    questions_from: str | None
    train: bool
    whole: bool = False


def parse(spec: str) -> Set:
    spec, *marks = spec.split("=")
    if set(marks) - {"train", "whole"}:
        raise SystemExit(f"{spec}: a set is marked =train or =whole, not ={'='.join(marks)}")
    train, whole = "train" in marks, "whole" in marks
    spec, _, questions_from = spec.partition("+")
    span = None
    if spec.count(":") == 2:
        spec, start, stop = spec.rsplit(":", 2)
        span = (int(start), int(stop))
    file, _, data_dir = spec.partition("@")
    name = Path(file).stem + (f"+{Path(questions_from).stem}" if questions_from else "")
    if span:
        name += f"[{span[0]}:{span[1]}]"
    if whole:
        name += "/whole"
    return Set(name, file, Path(data_dir or "data"), span, questions_from or None, train, whole)


def gather(one: Set) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Features, labels (1: should answer) and which rows check, for one set; and whether its
    questions are asked in another language than its articles."""
    dataset = ev.load_squad(one.file)
    if one.questions_from:
        dataset = dataset.asked_as(ev.load_squad(one.questions_from))
    if one.articles:
        dataset = dataset.subset(range(len(dataset.articles))[one.articles[0] : one.articles[1]])
    the_plan = ev.plan(
        dataset,
        abstention=not one.whole,
        leave_one_out=one.whole,
        questions=QUESTIONS_PER_SET // 2 if one.whole else QUESTIONS_PER_SET,
        seed=0,
    )
    library = Library(one.data_dir, model_cache=model_cache(os.environ))
    collection = library.collection(ev.default_collection(one.file, one.articles, not one.whole))
    ids = ev.build(collection, the_plan.indexed, None)
    # A question asked without its own article stands for one about an article the collection
    # lacks: it is read at the whole collection's size, not the size of the scope that leaves
    # the article out, which would tell the two kinds apart by their size alone.
    whole_size = len(collection.retriever.backend.keywords())
    scopes = the_plan.scopes(ids)
    n = len(dataset.articles)
    rows, labels, checks, foreign = [], [], [], []
    asked = [(q, 1) for q in the_plan.answer] + [(q, 0) for q in the_plan.decline]
    for (q, should), scope in zip(asked, scopes, strict=True):
        found = collection.retriever.retrieve(" ".join(q.question.split()), 5, scope)
        if found.evidence is None:
            continue
        evidence = found.evidence
        if one.whole:
            evidence = dataclasses.replace(evidence, passages=whole_size)
        rows.append([_number(getattr(evidence, f)) for f in FIELDS])
        labels.append(should)
        checks.append(not one.train and _checked(q.article, n))
        foreign.append(not found.evidence.native)
    across = sum(foreign) > len(foreign) / 2
    return np.array(rows), np.array(labels), np.array(checks), across


def _checked(article: int, articles: int) -> bool:
    """Whether questions about the article at this position check rather than fit: the second
    half of each half of a file's articles. One rule for every set, so that no question checks
    in one set and fits in another (a file indexed half and whole; XQuAD's languages, whose
    articles are the same at the same positions)."""
    half = (articles + 1) // 2
    if article < half:
        return article >= half // 2
    return article >= half + (articles - half) // 2


def fit(x: np.ndarray, y: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, float]:
    """Weighted logistic regression with a ridge, by Newton's method."""
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(a.shape[1])
    ridge = np.full(a.shape[1], RIDGE)
    ridge[-1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-a @ w))
        gradient = a.T @ (weight * (p - y)) + ridge * w
        hessian = (a * (weight * p * (1 - p))[:, None]).T @ a + np.diag(ridge)
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def _number(value: object) -> float:
    return np.nan if value is None else float(value)  # type: ignore[arg-type]


def _features(raw: np.ndarray) -> np.ndarray:
    """The judgement's features of each question's kept evidence."""
    kinds = {f.name: f.type for f in dataclasses.fields(Evidence)}
    rows = []
    for values in raw:
        given: dict[str, object] = {
            f: (
                bool(v)
                if kinds[f] in ("bool", bool)
                else int(v)
                if kinds[f] in ("int", int)
                else float(v)
            )
            for f, v in zip(FIELDS, values, strict=True)
        }
        given.update({f: None for f, v in zip(FIELDS, values, strict=True) if np.isnan(v)})
        rows.append(Evidence(**given).features())  # type: ignore[arg-type]
    return np.array(rows)


def shares(logit: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    answered = float((logit[y == 1] >= 0).mean()) if (y == 1).any() else 1.0
    declined = float((logit[y == 0] < 0).mean()) if (y == 0).any() else 1.0
    return answered, declined


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
        "--sweep",
        type=lambda v: [float(o) for o in v.split(",")],
        default=[],
        help="print every set's shares with these offsets added to the fitted bias: O,O,...",
    )
    args = parser.parse_args(argv)
    sets = [parse(s) for s in args.sets]
    data = {}
    kept: dict[str, np.ndarray] = {}
    if args.reuse and args.features.exists():
        kept = dict(np.load(args.features, allow_pickle=False))
        stale = [k for k, v in kept.items() if k.endswith("/x") and v.shape[1] != len(FIELDS)]
        if stale:
            raise SystemExit(
                f"{args.features} keeps evidence of other fields than Evidence has now; "
                "fit without --reuse to ask its sets again."
            )
        data = {
            s.name: (
                kept[f"{s.name}/x"],
                kept[f"{s.name}/y"],
                kept[f"{s.name}/check"],
                bool(kept[f"{s.name}/across"]),
            )
            for s in sets
            if f"{s.name}/x" in kept
        }
    if any(s.name not in data for s in sets):
        for s in sets:
            if s.name not in data:
                print(f"asking {s.name}", file=sys.stderr, flush=True)
                data[s.name] = gather(s)
        asked = {
            f"{k}/{part}": v
            for k, got in data.items()
            for part, v in zip(
                ("x", "y", "check", "across"), (*got[:3], np.array(got[3])), strict=True
            )
        }
        arrays: dict[str, Any] = kept | asked  # the sets kept before, and these
        np.savez(args.features, **arrays)
    data = {
        name: (_features(raw), y, check, across) for name, (raw, y, check, across) in data.items()
    }
    xs, ys, ws = [], [], []
    for name, (x, y, check, _) in data.items():
        fitting = ~check
        for label in (0, 1):
            rows = fitting & (y == label)
            if rows.any():
                xs.append(x[rows])
                ys.append(y[rows])
                ws.append(np.full(rows.sum(), args.weigh.get(name, 1.0) / rows.sum()))
    x, y, weight = np.vstack(xs), np.concatenate(ys), np.concatenate(ws)
    mean, scale = np.nanmean(x, axis=0), np.nanstd(x, axis=0)
    scale[scale == 0] = 1.0

    def standardised(rows: np.ndarray) -> np.ndarray:
        # Evidence there is none of (NaN: no other story in a one-article collection, no crowd
        # among fewer than 100 passages) is read as the mean, as Judgement.margin reads it.
        z = (rows - mean) / scale
        return np.where(np.isnan(z), 0.0, z)

    weights, bias = fit(standardised(x), y, weight * len(y) / weight.sum())

    def logits(rows: np.ndarray) -> np.ndarray:
        return standardised(rows) @ weights + bias

    foreign = FEATURES.index("foreign")

    def shortfall(offset: float, part: str, across: bool) -> float:
        """How far the set furthest below its targets is from them (< 0: below), among the
        sets whose questions are (`across`) or are not in another language than the articles',
        with `offset` added to their logits."""
        worst = np.inf
        for name, (features, labels, check, set_across) in data.items():
            rows = (check if part == "check" else ~check) & (features[:, foreign] == across)
            if set_across != across or not rows.any():
                continue
            answered, declined = shares(logits(features[rows]) + offset, labels[rows])
            decline = DECLINE_ACROSS if across else DECLINE_NEWS if "news" in name else DECLINE
            worst = min(worst, answered - ANSWER, declined - decline)
        return float(worst)

    # One offset for questions in the articles' language, one for the others: the first moves
    # the bias, the second the weight of `foreign` (which is 1 for the others, 0 for the first).
    grid = np.linspace(-3, 3, 601)
    native_offset = float(max(grid, key=lambda o: shortfall(float(o), "fit", False)))
    across_offset = float(max(grid, key=lambda o: shortfall(float(o), "fit", True)))
    step = across_offset - native_offset
    weights[foreign] += step * scale[foreign]
    bias += native_offset + step * mean[foreign]

    figures: dict[str, dict[str, dict[str, float]]] = {}
    for name, (features, labels, check, _) in data.items():
        figures[name] = {}
        for part, rows in (("fit", ~check), ("check", check)):
            if rows.any():
                answered, declined = shares(logits(features[rows]), labels[rows])
                figures[name][part] = {
                    "answered": round(answered, 3),
                    "declined": round(declined, 3),
                    "questions": int(rows.sum()),
                }
        print(name, figures[name])
    result = {
        "model": args.model,
        "features": list(FEATURES),
        "weights": [round(float(w), 6) for w in weights],
        "bias": round(bias, 6),
        "mean": [round(float(m), 6) for m in mean],
        "scale": [round(float(s), 6) for s in scale],
        "fitted_on": [
            {"set": s.name, "articles": list(s.articles) if s.articles else None, "train": s.train}
            | ({"whole": True} if s.whole else {})
            for s in sets
        ],
        # How it was fitted, so that the file can be fitted again as it was.
        "ridge": RIDGE,
        "weighed": args.weigh,
        "targets": {
            "answer": ANSWER,
            "decline": DECLINE,
            "decline_news": DECLINE_NEWS,
            "decline_across": DECLINE_ACROSS,
        },
        "figures": figures,
    }
    print(json.dumps(dict(zip(FEATURES, result["weights"], strict=True)), indent=1))
    for offset in args.sweep:
        swept = {}
        for name, (features, labels, _, _) in data.items():
            answered, declined = shares(logits(features) + offset, labels)
            swept[name] = {"answered": answered, "declined": declined}
        print(json.dumps({"offset": offset, "sets": swept}))
    if args.out:
        args.out.write_text(
            json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
