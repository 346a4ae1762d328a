"""The reader judged on held-out questions: the rules' first passages reordered by it, and how
well its best score tells questions about indexed stories from questions about missing ones.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path
from typing import Any

from index.ops.reader_model import Scorer
from index.ops.reader_pairs import SEED, progress, squash

__all__ = ["evaluate"]


def _auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def evaluate(args: argparse.Namespace, work: Path, checkpoint: Path) -> dict[str, Any]:
    from index.library import Library
    from index.ops.evaluate import build, load_squad

    scorer = Scorer(checkpoint, args.threads, args.device)
    data = load_squad(args.eval)
    library = Library(work / "library")
    coll = library.collection("eval-all")
    ids = build(coll, data)
    half = list(range(len(data.articles) // 2))
    half_coll = library.collection("eval-half")
    half_ids = build(half_coll, data.subset(half))
    questions = [q for q in data.questions if q.answers]
    if args.eval_questions:
        questions = random.Random(SEED).sample(questions, min(args.eval_questions, len(questions)))
    ranks: dict[str, list[int | None]] = {"rules": [], "reader": [], "blend": []}
    present: dict[str, list[float]] = {"reader": [], "rules_answered": []}
    absent: dict[str, list[float]] = {"reader": [], "rules_answered": []}
    started = time.monotonic()
    for n, q in enumerate(questions):
        gold = squash(data.articles[q.article].paragraphs[q.paragraph - 1])
        answer = coll.ask(q.question, top_k=args.rerank)
        cites = answer.citations

        def is_gold(c: Any, aid: int, gold: str = gold) -> bool:
            return c.article_id == aid and squash(c.text) in gold

        logits = scorer(q.question, [c.text for c in cites])
        by_reader = sorted(range(len(cites)), key=lambda i: -logits[i])
        place = {i: r for r, i in enumerate(by_reader)}
        orders = {
            "rules": list(range(len(cites))),
            "reader": by_reader,
            # rank fusion: the rules' place and the reader's place weigh alike
            "blend": sorted(range(len(cites)), key=lambda i: -(1 / (10 + i) + 1 / (10 + place[i]))),
        }
        for name, order in orders.items():
            hit = next(
                (r for r, i in enumerate(order, 1) if is_gold(cites[i], ids[q.article])), None
            )
            ranks[name].append(hit)
        # answerability with half the stories indexed: present or absent
        inside = q.article in half
        half_answer = half_coll.ask(q.question, top_k=args.rerank)
        best = max(scorer(q.question, [c.text for c in half_answer.citations]), default=-99.0)
        (present if inside else absent)["reader"].append(best)
        (present if inside else absent)["rules_answered"].append(float(not half_answer.abstained))
        if n % 25 == 0:
            progress("evaluating", n + 1, len(questions), started, n + 1, len(questions))
    del half_ids
    library.close()

    def recall(r: list[int | None], k: int) -> float:
        return round(sum(x is not None and x <= k for x in r) / max(1, len(r)), 4)

    threshold = _matching_threshold(present["reader"], absent["reader"], present["rules_answered"])
    report = {
        "file": str(args.eval),
        "questions": len(questions),
        "pairs_trained": scorer.pairs,
        "rerank_depth": args.rerank,
        **{f"{k}_r1": recall(v, 1) for k, v in ranks.items()},
        **{f"{k}_r5": recall(v, 5) for k, v in ranks.items()},
        "half_indexed": {
            "rules_answered": _mean(present["rules_answered"]),
            "rules_declined": 1 - _mean(absent["rules_answered"]),
            "reader_auc": round(_auc(present["reader"], absent["reader"]), 4),
            "reader_threshold_at_rules_answered": threshold,
            "reader_declined_there": _mean([float(x < threshold) for x in absent["reader"]]),
        },
    }
    return report


def _mean(xs: list[float]) -> float:
    return round(sum(xs) / max(1, len(xs)), 4)


def _matching_threshold(present: list[float], absent: list[float], answered: list[float]) -> float:
    """The reader's threshold that answers as many present questions as the rules do."""
    if not present:
        return 0.0
    share = _mean(answered)
    ordered = sorted(present, reverse=True)
    k = max(1, min(len(ordered), round(share * len(ordered))))
    return round(ordered[k - 1], 4)
