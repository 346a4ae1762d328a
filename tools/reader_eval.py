"""The reader judged on held-out questions: the rules' first passages reordered by it, and how
well its best score tells questions about indexed stories from questions about missing ones.

Each question is scored once; the orders compared are the rules', the reader's alone, and rank
fusions of both at several weights of the reader. A fusion is judged against the rules question
by question (how many it brings first that the rules did not, and the reverse), because on a few
hundred questions a difference of a few points can be chance.

Only the questions about the file's *choose* articles are asked (`index/ops/eval_split.py`):
what is decided here (which reader, which fusion weight, whether one ships) is a choice, and the
report part is left for the figures of what ships (`articlebot eval --part report`). The reader
is trained on ../shared/train alone, so no evaluation file's fit part is read either.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.reader_model import Scorer
from tools.reader_pairs import SEED, progress, squash

__all__ = ["BLEND_WEIGHTS", "PART", "candidates", "evaluate", "judge"]

# The reader's weight against the rules' in rank fusion; 0 is the rules alone.
BLEND_WEIGHTS = (0.5, 1.0, 2.0, 4.0)
# The part of an evaluation file a reader is judged on.
PART = "choose"


# Rank fusion's constant: places near the top differ most (1/10 against 1/11), deep ones little.
FUSION_K = 10


def fused_with_reader(logits: Sequence[float], weight: float) -> list[int]:
    """The rules' order (0, 1, 2, ...) fused with the reader's scores of the same passages, the
    reader's place weighing `weight` times the rules' place: indexes, best first."""
    by_reader = sorted(range(len(logits)), key=lambda i: -logits[i])
    place = {i: r for r, i in enumerate(by_reader)}
    return sorted(
        range(len(logits)),
        key=lambda i: -(1 / (FUSION_K + i) + weight / (FUSION_K + place[i])),
    )


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def _sign_test(better: int, worse: int) -> float:
    """Two-sided exact sign test: the chance of a split this lopsided if neither order is better."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(better, worse) + 1)) / 2**n
    return round(min(1.0, 2 * tail), 4)


def evaluate(
    args: argparse.Namespace,
    work: Path,
    checkpoint: Path,
    scorer: Any = None,
    files: Path | None = None,
) -> dict[str, Any]:
    """The rules' first `args.rerank` passages of each question reordered by the reader of
    `checkpoint` (or by `scorer`: called with a question and passages, logits back; its
    `pairs` what it was trained on); the per-question files written under `files` (`work`)."""
    scorer = scorer or Scorer(checkpoint, args.threads, args.device)
    asked = candidates(args, work)

    def score(n: int, part: str) -> list[float]:
        return list(scorer(asked[n]["question"], asked[n][part]["texts"]))

    return judge(asked, score, scorer.pairs, args.rerank, str(args.eval), files or work)


def candidates(args: argparse.Namespace, work: Path) -> list[dict[str, Any]]:
    """What the rules find for each question about the choose articles of `args.eval`
    (`args.eval_questions` of them, if given), before any reader: its first `args.rerank`
    passages (article ids, texts, the rules' margin) asked of all the stories ("full"), of half
    of them ("half"), and of all but its own ("others"); which of the full list lie in its gold
    paragraph; whether its story is in the half. Asked once, judged by any reader (`judge`),
    here or on another machine."""
    from index.library import Library
    from index.ops.eval_split import parts
    from index.ops.evaluate import build, load_squad
    from index.settings import model_cache

    data = load_squad(args.eval)
    part = parts([a.title for a in data.articles])
    questions = [q for q in data.questions if q.answers and part[q.article] == PART]
    if not questions:
        raise SystemExit(f"{args.eval} has no answerable question about a {PART} article")
    if args.eval_questions:
        questions = random.Random(SEED).sample(questions, min(args.eval_questions, len(questions)))
    library = Library(work / "library", model_cache=model_cache(os.environ))
    coll = library.collection("eval-all")
    ids = build(coll, data)
    half = list(range(len(data.articles) // 2))
    half_coll = library.collection("eval-half")
    build(half_coll, data.subset(half))
    started = time.monotonic()

    def found(collection: Any, question: str, scope: set[int] | None = None) -> dict[str, Any]:
        hits = collection.retriever.retrieve(question, args.rerank, scope)
        passages = [hits.passages[h.passage_id] for h in hits.hits]
        return {
            "articles": [p.article_id for p in passages],
            "texts": [p.text for p in passages],
            "margin": hits.margin,
        }

    out = []
    for n, q in enumerate(questions):
        gold = squash(data.articles[q.article].paragraphs[q.paragraph - 1])
        full = found(coll, q.question)
        out.append(
            {
                "question": q.question,
                "part": PART,
                "gold": [
                    a == ids[q.article] and squash(t) in gold
                    for a, t in zip(full["articles"], full["texts"], strict=True)
                ],
                "present_half": q.article in half,
                "full": full,
                # Answerability at two sizes: half the stories indexed (its own present or
                # not), and all of them but its own (absent among the most).
                "half": found(half_coll, q.question),
                "others": found(coll, q.question, set(ids) - {ids[q.article]}),
            }
        )
        if n % 25 == 0:
            progress("retrieving", n + 1, len(questions), started, n + 1, len(questions))
    library.close()
    return out


def judge(
    asked: list[dict[str, Any]],
    score: Any,
    pairs_trained: int,
    rerank: int,
    source: str,
    files: Path,
) -> dict[str, Any]:
    """The questions of `candidates` (asked from the file `source`) judged with a reader's
    logits, `score(n, part)` for question n's passages of one part ("full", "half", "others");
    the per-question files (`answerability-STEM.jsonl`, `ordering-STEM.jsonl`, STEM the file's
    name) written under `files`; the summary. Questions gathered before the evaluation was held
    to the choose part, or of another part, are refused."""
    if any(q.get("part") != PART for q in asked):
        raise SystemExit(
            f"The questions of {source} are not all about its {PART} articles: gather them "
            "again (python -m tools.reader_mine --eval FILE, or reader_eval.candidates)."
        )
    stem = Path(source).stem
    orders = ["rules", "reader", *(f"blend_{w:g}" for w in BLEND_WEIGHTS)]
    ordering: list[dict[str, Any]] = []  # per question: the reader's logits, where the gold is
    ranks: dict[str, list[int | None]] = {name: [] for name in orders}
    records: list[dict[str, Any]] = []
    reader_ms: list[float] = []
    started = time.monotonic()

    def judged(n: int, part: str) -> dict[str, Any]:
        began = time.perf_counter()
        logits = score(n, part)
        reader_ms.append((time.perf_counter() - began) * 1000)
        return {"logits": logits, "best": max(logits, default=-99.0)}

    for n, q in enumerate(asked):
        full = judged(n, "full")
        logits = full["logits"]
        by_order = {
            "rules": list(range(len(logits))),
            "reader": sorted(range(len(logits)), key=lambda i: -logits[i]),
            **{f"blend_{w:g}": fused_with_reader(logits, w) for w in BLEND_WEIGHTS},
        }
        for name, order in by_order.items():
            ranks[name].append(next((r for r, i in enumerate(order, 1) if q["gold"][i]), None))
        ordering.append({"logits": logits, "gold": (ranks["rules"][-1] or 0) - 1})
        for pool, present, part, seen in (
            ("half", q["present_half"], "half", judged(n, "half")),
            ("all", True, "full", full),
            ("all", False, "others", judged(n, "others")),
        ):
            records.append(
                {
                    "pool": pool,
                    "present": present,
                    "margin": q[part]["margin"],
                    "best": seen["best"],
                }
            )
        if n % 25 == 0:
            progress("evaluating", n + 1, len(asked), started, n + 1, len(asked))
    # Kept for further analysis (another fusion, another threshold) without scoring again.
    (files / f"answerability-{stem}.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in records)
    )
    (files / f"ordering-{stem}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ordering))

    def recall(r: list[int | None], k: int) -> float:
        return round(sum(x is not None and x <= k for x in r) / max(1, len(r)), 4)

    def against_rules(name: str) -> dict[str, Any]:
        first = [(a == 1, b == 1) for a, b in zip(ranks[name], ranks["rules"], strict=True)]
        better = sum(a and not b for a, b in first)
        worse = sum(b and not a for a, b in first)
        return {
            "first_gained": better,
            "first_lost": worse,
            "sign_test_p": _sign_test(better, worse),
        }

    reader_ms.sort()
    return {
        "file": source,
        "part": PART,
        "questions": len(asked),
        "pairs_trained": pairs_trained,
        "rerank_depth": rerank,
        **{f"{k}_r1": recall(v, 1) for k, v in ranks.items()},
        **{f"{k}_r5": recall(v, 5) for k, v in ranks.items()},
        **{f"{k}_mrr": _mrr(v) for k, v in ranks.items()},
        "against_rules": {name: against_rules(name) for name in orders[1:]},
        "reader_ms_p50": round(statistics.median(reader_ms), 1) if reader_ms else None,
        "reader_ms_p95": round(reader_ms[int(0.95 * (len(reader_ms) - 1))], 1)
        if reader_ms
        else None,
        "answerability": _answerability(records),
    }


def _answerability(records: list[dict[str, Any]]) -> dict[str, Any]:
    """How well the rules' margin and the reader's best score tell questions about stories
    present from questions about stories absent: with half the stories indexed, and with all
    of them (each question asked again of all but its own story)."""
    report: dict[str, Any] = {}
    for pool in ("half", "all"):
        rows = [r for r in records if r["pool"] == pool]
        present = [r for r in rows if r["present"]]
        absent = [r for r in rows if not r["present"]]
        report[pool] = {
            "answered_by_rules": _mean([float(r["margin"] >= 0) for r in present]),
            "declined_by_rules": _mean([float(r["margin"] < 0) for r in absent]),
            "rules_auc": round(
                _auc([r["margin"] for r in present], [r["margin"] for r in absent]), 4
            ),
            "reader_auc": round(_auc([r["best"] for r in present], [r["best"] for r in absent]), 4),
        }
    return report


def _mrr(ranks: list[int | None]) -> float:
    return round(sum(1 / r for r in ranks if r) / max(1, len(ranks)), 4)


def _mean(xs: list[float]) -> float:
    return round(sum(xs) / max(1, len(xs)), 4)
