"""The reader's training pairs, mined with the project's own retrieval (see train_reader.py).

The training articles are added, in pools, to collections through the real add path, so
passages are cut as the project cuts articles; each drawn question is asked of its own pool and
of another. Its positive is the passage that answers; its hard negatives the other passages the
rules rank highest (the rules' own mistakes); the best passages of a pool without its article
are the unanswerable case. One JSON line per question, appended as it is mined, so a run that is
stopped resumes where it stopped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Group", "load_groups", "mine", "progress", "squash"]

SEED = 13
# Pairs made of each question: its positive, hard negatives from its own pool, and the best
# passages of a pool without its article.
HARD_NEGATIVES = 4
OTHER_POOL = 2
# How deep the rules' ranking is read for negatives and, at evaluation, reranked.
MINE_DEPTH = 20


@dataclass(frozen=True)
class Group:
    question: str
    positive: str
    negatives: list[str]  # from its own pool: ranked high by the rules, not the answer
    others: list[str]  # from a pool without its article: nothing there answers

    def pairs(self) -> list[tuple[str, str, float]]:
        out = [(self.question, self.positive, 1.0)]
        out += [(self.question, p, 0.0) for p in self.negatives + self.others]
        return out


def squash(text: str) -> str:
    return " ".join(text.split()).lower()


def mine(args: argparse.Namespace, work: Path) -> Path:
    from index.embedding.embedder import MINILM_MODEL_NAME
    from index.errors import BadInput
    from index.library import Library
    from index.ops.evaluate import load_squad
    from index.settings import model_cache

    out = work / "pairs.jsonl"
    done = _count_lines(out)
    data = load_squad(args.train)
    rng = random.Random(SEED)
    order = list(range(len(data.articles)))
    rng.shuffle(order)
    # A draw of the articles (in the same shuffled order), for a smaller run.
    order = order[: getattr(args, "articles", None) or len(order)]
    pools = [order[i : i + args.pool_articles] for i in range(0, len(order), args.pool_articles)]
    per_pool = math.ceil(args.questions / len(pools))
    plan: list[tuple[int, Any]] = []  # (pool, question) in a fixed order
    for p, pool in enumerate(pools):
        members = set(pool)
        qs = [q for q in data.questions if q.article in members and q.answers]
        plan += [(p, q) for q in random.Random(SEED + p).sample(qs, min(per_pool, len(qs)))]
    plan = plan[: args.questions]
    if done >= len(plan):
        return out
    # Mined with the retrieval the reader is measured against: all-MiniLM-L6-v2's unless the
    # caller names another model (`args.model`; tools/reader_mine.py names e5's).
    library = Library(
        work / "library",
        model_path=getattr(args, "model", None) or MINILM_MODEL_NAME,
        model_cache=model_cache(os.environ),
    )
    ids: dict[int, dict[int, int]] = {}  # pool -> article position -> article id
    rules_order = bool(getattr(args, "rules_order", False))

    def collection(p: int) -> Any:
        coll = library.collection(f"pool-{p}")
        if p not in ids:
            ids[p] = {}
            for position in pools[p]:
                article = data.articles[position]
                try:
                    added = coll.add_text(
                        "\n\n".join(article.paragraphs), title=article.title, source="train"
                    )
                except BadInput:  # an article the project would refuse too: not mined
                    continue
                ids[p][position] = added.article.id
        return coll

    started = time.monotonic()
    with out.open("a", encoding="utf-8") as f:
        for n in range(done, len(plan)):
            p, q = plan[n]
            own = collection(p)
            if q.article not in ids[p]:
                f.write("{}\n")  # keeps each question's line where a resumed run expects it
                continue
            gold_text = squash(data.articles[q.article].paragraphs[q.paragraph - 1])
            article_id = ids[p][q.article]
            answers = [squash(a) for a in q.answers]
            positive = None
            negatives: list[str] = []
            for cited, passage in _ranked(own, q.question, MINE_DEPTH, rules_order):
                text = squash(passage)
                inside = cited == article_id and text in gold_text
                if inside and positive is None and any(a in text for a in answers):
                    positive = passage
                elif not inside and not any(a in text for a in answers):
                    negatives.append(passage)
            if positive is None:  # the rules missed it: the piece of its paragraph that answers
                pieces = [
                    x.text
                    for x in own.passages_of(article_id)
                    if squash(x.text) in gold_text and any(a in squash(x.text) for a in answers)
                ]
                positive = (
                    pieces[0] if pieces else data.articles[q.article].paragraphs[q.paragraph - 1]
                )
            other = collection((p + 1) % len(pools))
            others = [t for _, t in _ranked(other, q.question, OTHER_POOL, rules_order)]
            group = Group(q.question, positive, negatives[:HARD_NEGATIVES], others[:OTHER_POOL])
            f.write(json.dumps(group.__dict__) + "\n")
            if n % 200 == 0:
                f.flush()
                progress("mining", n + 1 - done, len(plan) - done, started, n + 1, len(plan))
    library.close()
    return out


def _ranked(collection: Any, question: str, depth: int, rules_order: bool) -> list[tuple[int, str]]:
    """(article id, text) of the passages ranked first for `question`: the answer's citations,
    or with `rules_order` the rules' own ranking of passages, the one a reader reorders
    (reader_eval.py), without composing an answer (a fifth of the time)."""
    if rules_order:
        found = collection.retriever.retrieve(question, depth)
        hits = [found.passages[h.passage_id] for h in found.hits]
        return [(p.article_id, p.text) for p in hits]
    return [(c.article_id, c.text) for c in collection.ask(question, top_k=depth).citations]


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as f:
        data = f.read()
    if data and not data.endswith(b"\n"):  # a line cut by a kill: drop it, mine it again
        with path.open("wb") as f:
            f.write(data[: data.rfind(b"\n") + 1])
        data = data[: data.rfind(b"\n") + 1]
    return data.count(b"\n")


def progress(what: str, n: int, total: int, started: float, shown: int, of: int) -> None:
    elapsed = time.monotonic() - started
    rate = n / elapsed if elapsed > 0 else 0.0
    left = (total - n) / rate if rate > 0 else float("inf")
    eta = f"{left / 60:.0f} min" if math.isfinite(left) else "?"
    print(f"{what} {shown:,}/{of:,}  {rate:.1f}/s  about {eta} left", file=sys.stderr, flush=True)


def load_groups(path: Path) -> list[Group]:
    with path.open(encoding="utf-8") as f:
        return [Group(**json.loads(line)) for line in f if line.strip() not in ("", "{}")]
