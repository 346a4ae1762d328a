"""Fit the weights that read a quote's candidate sentences (answers/quote_choice.py): a softmax
over each question's candidates, whose chances are those of holding the answer.

Articles drawn from the training file are added, in pools of `--pool` articles, to collections
of a library in `--work` through the real add path (so passages and sentences are cut as the
project cuts them), and every `--every`-th question of theirs is asked of its pool. Of the
sentences the answer would quote from (the best passages' sentences, compose.candidates), those
that hold a gold answer are the right ones; a question none of whose candidates holds one, or
that the bot declines, teaches nothing and is left out. The loss is the softmax's: minus the
log of the chances the right sentences get together, plus a small ridge on the standardised
weights. Nothing in `../shared/eval` is read: the rules that turn the chances into a quote
(`QuoteRules.length_cost`, `least_quote`, `budget`) are set by `python -m tools.bench.quotes`.

    python -m tools.fit_quotes --train ../shared/train/squad-v1.1-train.json \\
        --work data/fit-quotes [--out index/answers/quote-weights.json]

The features asked are kept in the work folder (`features.npz`), so that `--reuse` fits again
without asking. Beside the fit, the weights are checked on questions they did not see: the
questions are split in `--folds` parts by number, and each part is scored by weights fitted on
the others (`held_out_likeliest_holds`, in the file). `--without NAME...` fits with those
features held at zero, to measure what they bring.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from pathlib import Path

import numpy as np

from index.answers.compose import candidates
from index.answers.quote_choice import FEATURES, WEIGHTS_FILE, table
from index.library import Library
from index.ops import evaluate as ev
from index.settings import model_cache

RIDGE = 1e-3
STEPS = 3000
STEP_SIZE = 0.5


def ask(train: Path, work: Path, articles: int, pool: int, every: int, seed: int) -> dict:
    """Rows of features, whether each sentence holds a gold answer, and its question's number."""
    dataset = ev.load_squad(str(train))
    drawn = sorted(random.Random(seed).sample(range(len(dataset.articles)), articles))
    library = Library(work / "library", model_cache=model_cache(os.environ))
    rows, right, group = [], [], []
    asked = 0
    for start in range(0, len(drawn), pool):
        part = dataset.subset(drawn[start : start + pool])
        collection = library.collection(f"fit-quotes-{start // pool}")
        ev.build(collection, part, None)
        for q in part.questions[::every]:
            if q.impossible:
                continue
            asked += 1
            question = " ".join(q.question.split())
            found = collection.retriever.retrieve(question, 5)
            if not found.hits or not found.relevant:
                continue
            cited = {found.passages[h.passage_id].article_id for h in found.hits}
            items, evidence = candidates(question, found, {a: collection.get(a) for a in cited})
            holds = [ev.holds(text, q.answers) for _, _, text in items]
            if not any(holds):
                continue
            rows.append(table(evidence))
            right += holds
            group += [asked] * len(items)
        print(f"pool {start // pool}: {asked:,} questions asked", file=sys.stderr, flush=True)
    if not rows:
        raise SystemExit(
            "No question asked had a gold answer among its answer's sentences; draw more "
            "articles (--articles) or ask more of their questions (--every)."
        )
    return {
        "rows": np.vstack(rows),
        "right": np.asarray(right, dtype=np.float64),
        "group": np.asarray(group),
        "asked": asked,
        "model": library.embedder_name(),
        "features": np.array(FEATURES),
    }


def fit(rows: np.ndarray, right: np.ndarray, group: np.ndarray) -> dict:
    """The softmax's weights on standardised features, by gradient descent (the loss is convex)."""
    spread = rows.std(0)
    # A feature that never varies (held at zero by --without) is left unscaled: it weighs 0.
    mean, scale = rows.mean(0), np.where(spread > 0, spread, 1.0)
    x = (rows - mean) / scale
    groups = np.unique(group, return_inverse=True)[1]
    n = int(groups.max()) + 1
    w = np.zeros(x.shape[1])

    def chances(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        logits = x @ w
        top = np.full(n, -np.inf)
        np.maximum.at(top, groups, logits)
        e = np.exp(logits - top[groups])
        return e, np.bincount(groups, e, n), np.bincount(groups, e * right, n)

    for _ in range(STEPS):
        e, total, held = chances(w)
        p = e / total[groups]
        q = e * right / held[groups]
        w -= STEP_SIZE * (x.T @ (p - q) / n + RIDGE * w)
    e, total, held = chances(w)
    return {
        "weights": w,
        "mean": mean,
        "scale": scale,
        "loss": float(-np.mean(np.log(held / total))),
        "likeliest_holds": likeliest_holds(x @ w, right, group),
        "questions": n,
        "sentences": len(rows),
    }


def likeliest_holds(logits: np.ndarray, right: np.ndarray, group: np.ndarray) -> float:
    """The share of questions whose likeliest sentence holds a gold answer."""
    likeliest: dict[int, int] = {}
    for i, g in enumerate(group.tolist()):
        if g not in likeliest or logits[i] > logits[likeliest[g]]:
            likeliest[g] = i
    return float(np.mean([right[i] for i in likeliest.values()]))


def held_out(rows: np.ndarray, right: np.ndarray, group: np.ndarray, folds: int) -> float:
    """`likeliest_holds` on questions the weights did not see: each of `folds` parts of the
    questions (by number) scored by weights fitted on the others."""
    part = np.unique(group, return_inverse=True)[1] % folds
    held = 0.0
    for k in range(folds):
        seen = part != k
        fitted = fit(rows[seen], right[seen], group[seen])
        x = (rows[~seen] - fitted["mean"]) / fitted["scale"]
        share = likeliest_holds(x @ fitted["weights"], right[~seen], group[~seen])
        held += share * len(np.unique(group[~seen]))
    return held / len(np.unique(group))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, required=True, help="SQuAD-format training file")
    parser.add_argument("--work", type=Path, required=True, help="a folder for the library")
    parser.add_argument("--articles", type=int, default=90, help="articles drawn (default 90)")
    parser.add_argument("--pool", type=int, default=45, help="articles a collection (default 45)")
    parser.add_argument("--every", type=int, default=3, help="ask every N-th question (3)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--reuse", action="store_true", help="fit the features kept in --work")
    parser.add_argument("--folds", type=int, default=3, help="parts checked held out (3)")
    parser.add_argument(
        "--without",
        nargs="+",
        default=[],
        choices=FEATURES,
        metavar="NAME",
        help="features held at 0",
    )
    parser.add_argument(
        "--out", type=Path, default=WEIGHTS_FILE, help="default: the file a checkout ships"
    )
    args = parser.parse_args(argv)
    kept = args.work / "features.npz"
    if args.reuse and kept.exists():
        # The features say how they were asked: the file records that, not this run's arguments.
        data = dict(np.load(kept))
        if tuple(data.get("features", ())) != FEATURES:
            raise SystemExit(
                f"{kept} holds other features than quote_choice.FEATURES; "
                "fit without --reuse to ask them again."
            )
    else:
        args.work.mkdir(parents=True, exist_ok=True)
        data = ask(args.train, args.work, args.articles, args.pool, args.every, args.seed)
        data["command"] = np.array(
            "python -m tools.fit_quotes "
            + " ".join(
                [
                    f"--train {args.train.name}",
                    f"--articles {args.articles}",
                    f"--pool {args.pool}",
                    f"--every {args.every}",
                    f"--seed {args.seed}",
                ]
            )
        )
        data["train_sha256"] = np.array(hashlib.sha256(args.train.read_bytes()).hexdigest())
        np.savez(kept, **data)
    rows = np.array(data["rows"], dtype=np.float64)
    rows[:, [FEATURES.index(name) for name in args.without]] = 0.0
    fitted = fit(rows, data["right"], data["group"])
    out = {
        "features": list(FEATURES),
        "weights": [round(float(v), 6) for v in fitted["weights"]],
        "mean": [round(float(v), 6) for v in fitted["mean"]],
        "scale": [round(float(v), 6) for v in fitted["scale"]],
        "fitted": {
            "command": str(data["command"]),
            "train_sha256": str(data["train_sha256"]),
            "model": str(data["model"]),
            "questions_asked": int(data["asked"]),
            "questions_fitted": fitted["questions"],
            "sentences": fitted["sentences"],
            "ridge": RIDGE,
            "loss": round(fitted["loss"], 4),
            "likeliest_holds": round(fitted["likeliest_holds"], 4),
            "held_out_likeliest_holds": round(
                held_out(rows, data["right"], data["group"], args.folds), 4
            ),
            "folds": args.folds,
            **({"without": args.without} if args.without else {}),
        },
    }
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out["fitted"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
