"""Train the reader: a cross-encoder that reads a question together with one passage.

    python -m index.ops.train_reader --train ../shared/train/squad-v1.1-train.json \
        --eval ../shared/eval/newsqa-dev-tune.json --work data/train-reader

Three stages, each resumable, all under `--work`:

1. mine: the training articles are added, in pools of `--pool-articles`, to collections of a
   library in `work/library` through the real add path (so passages are cut as the project cuts
   articles), and every drawn question is asked of its own pool and of another pool. The
   passage that answers is the positive; the other passages the rules rank highest in its own
   pool are the hard negatives (the rules' own mistakes), and the best passages of a pool that
   lacks the article are the unanswerable case. One JSON line per question in `pairs.jsonl`.
2. train: the packaged all-MiniLM-L6-v2 weights, the first `--layers` layers, a mean-pooled
   head giving one logit per (question, passage). Loss: binary cross-entropy on every pair
   (a calibrated answerability score) plus softmax cross-entropy over each question's own pool
   (the ordering). A checkpoint every `--checkpoint-minutes`; run again to resume.
3. evaluate: questions of the `--eval` file asked of a collection of its articles; the rules'
   first `--rerank` passages reordered by the model; R@1 / R@5 of the rules, of the model
   alone, and of their blend, printed as JSON.

Seeds are fixed: the same arguments give the same pairs and, on one machine, the same weights.
Nothing from the evaluation file is trained on: it is read in stage 3 only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["main"]

SEED = 13
# Pairs made of each question: its positive, hard negatives from its own pool, and the best
# passages of a pool without its article.
HARD_NEGATIVES = 4
OTHER_POOL = 2
# How deep the rules' ranking is read for negatives and, at evaluation, reranked.
MINE_DEPTH = 20
MAX_TOKENS = 128


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


# stage 1: mining


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def mine(args: argparse.Namespace, work: Path) -> Path:
    from index.errors import BadInput
    from index.library import Library
    from index.ops.evaluate import load_squad

    out = work / "pairs.jsonl"
    done = _count_lines(out)
    data = load_squad(args.train)
    rng = random.Random(SEED)
    order = list(range(len(data.articles)))
    rng.shuffle(order)
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
    library = Library(work / "library")
    ids: dict[int, dict[int, int]] = {}  # pool -> article position -> article id

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
            gold_text = _squash(data.articles[q.article].paragraphs[q.paragraph - 1])
            article_id = ids[p][q.article]
            answer = own.ask(q.question, top_k=MINE_DEPTH)
            answers = [_squash(a) for a in q.answers]
            positive = None
            negatives: list[str] = []
            for c in answer.citations:
                text = _squash(c.text)
                inside = c.article_id == article_id and text in gold_text
                if inside and positive is None and any(a in text for a in answers):
                    positive = c.text
                elif not inside and not any(a in text for a in answers):
                    negatives.append(c.text)
            if positive is None:  # the rules missed it: the piece of its paragraph that answers
                pieces = [
                    x.text
                    for x in own.passages_of(article_id)
                    if _squash(x.text) in gold_text and any(a in _squash(x.text) for a in answers)
                ]
                positive = (
                    pieces[0] if pieces else data.articles[q.article].paragraphs[q.paragraph - 1]
                )
            other = collection((p + 1) % len(pools))
            others = [c.text for c in other.ask(q.question, top_k=OTHER_POOL).citations]
            group = Group(q.question, positive, negatives[:HARD_NEGATIVES], others[:OTHER_POOL])
            f.write(json.dumps(group.__dict__) + "\n")
            if n % 200 == 0:
                f.flush()
                _progress("mining", n + 1 - done, len(plan) - done, started, n + 1, len(plan))
    library.close()
    return out


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


def _progress(what: str, n: int, total: int, started: float, shown: int, of: int) -> None:
    elapsed = time.monotonic() - started
    rate = n / elapsed if elapsed > 0 else 0.0
    left = (total - n) / rate if rate > 0 else float("inf")
    eta = f"{left / 60:.0f} min" if math.isfinite(left) else "?"
    print(f"{what} {shown:,}/{of:,}  {rate:.1f}/s  about {eta} left", file=sys.stderr, flush=True)


# stage 2: the model and its training


def load_groups(path: Path) -> list[Group]:
    with path.open(encoding="utf-8") as f:
        return [Group(**json.loads(line)) for line in f if line.strip() not in ("", "{}")]


def make_model(layers: int, source: str | None = None) -> Any:
    """The reader: the packaged encoder cut to `layers` layers, a mean-pooled linear head."""
    import torch
    from transformers import AutoModel

    from index.embedding.embedder import default_model_path

    class Reader(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = AutoModel.from_pretrained(source or default_model_path())
            self.encoder.encoder.layer = self.encoder.encoder.layer[:layers]
            self.encoder.config.num_hidden_layers = layers
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    return Reader()


def _batches(groups: list[Group], per_step: int, seed: int, epoch: int) -> list[list[Group]]:
    order = list(range(len(groups)))
    random.Random(seed + epoch).shuffle(order)
    return [[groups[i] for i in order[s : s + per_step]] for s in range(0, len(order), per_step)]


def train(args: argparse.Namespace, work: Path, groups: list[Group]) -> Path:
    import torch
    from transformers import AutoTokenizer

    from index.embedding.embedder import default_model_path

    torch.manual_seed(SEED)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    tokenizer = AutoTokenizer.from_pretrained(default_model_path())
    model = make_model(args.layers).to(device)
    # The word embeddings stay as packaged: they are most of the weights, and SQuAD's vocabulary
    # is narrower than the questions people ask.
    model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    pairs_per_group = 1 + HARD_NEGATIVES + OTHER_POOL
    total_steps = math.ceil(args.pairs / (args.groups_per_step * pairs_per_group))
    warmup = max(1, total_steps // 20)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda s: min((s + 1) / warmup, max(0.0, (total_steps - s) / (total_steps - warmup))),
    )
    checkpoint = work / "checkpoint.pt"
    step, pairs_seen = 0, 0
    if checkpoint.exists():
        state = torch.load(checkpoint, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step, pairs_seen = state["step"], state["pairs"]
        torch.set_rng_state(state["rng"])
        print(f"resumed at step {step:,} ({pairs_seen:,} pairs)", file=sys.stderr)
    bce = torch.nn.BCEWithLogitsLoss()
    per_epoch = math.ceil(len(groups) / args.groups_per_step)
    started, since_save, first_step = time.monotonic(), time.monotonic(), step
    model.train()
    while step < total_steps:
        epoch, offset = divmod(step, per_epoch)
        batch = _batches(groups, args.groups_per_step, SEED, epoch)[offset]
        pairs = [p for g in batch for p in g.pairs()]
        encoded = tokenizer(
            [q for q, _, _ in pairs],
            [t for _, t, _ in pairs],
            truncation="only_second",
            max_length=MAX_TOKENS,
            padding=True,
            return_tensors="pt",
        ).to(device)
        labels = torch.tensor([y for _, _, y in pairs], device=device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16):
            logits = model(**encoded).float()
        loss = bce(logits, labels)
        # The ordering within each question's own pool: its positive against its hard negatives.
        at = 0
        listwise = []
        for g in batch:
            own = logits[at : at + 1 + len(g.negatives)]
            if len(own) > 1:
                listwise.append(-torch.log_softmax(own, 0)[0])
            at += len(g.pairs())
        if listwise:
            loss = loss + torch.stack(listwise).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        pairs_seen += len(pairs)
        if step % 20 == 0 or step == total_steps:
            done = step - first_step
            elapsed = time.monotonic() - started
            left = (total_steps - step) * elapsed / done / 60
            print(
                f"train step {step:,}/{total_steps:,}  pairs {pairs_seen:,}  "
                f"loss {loss.item():.3f}  {done * len(pairs) / elapsed:.1f} pairs/s  "
                f"about {left:.0f} min left",
                file=sys.stderr,
                flush=True,
            )
        if time.monotonic() - since_save > args.checkpoint_minutes * 60 or step == total_steps:
            state = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "step": step,
                "pairs": pairs_seen,
                "rng": torch.get_rng_state(),
                "args": {k: v for k, v in vars(args).items() if k != "func"},
            }
            torch.save(state, checkpoint.with_suffix(".tmp"))
            os.replace(checkpoint.with_suffix(".tmp"), checkpoint)
            since_save = time.monotonic()
    return checkpoint


# stage 3: evaluation on held-out data


class Scorer:
    """A trained reader from a checkpoint: logits for (question, passage) pairs."""

    def __init__(self, checkpoint: Path, threads: int, device: str = "cpu") -> None:
        import torch
        from transformers import AutoTokenizer

        from index.embedding.embedder import default_model_path

        state = torch.load(checkpoint, map_location=device, weights_only=False)
        self.torch = torch
        self.device = torch.device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(default_model_path())
        self.model = make_model(state["args"]["layers"]).to(self.device)
        self.model.load_state_dict(state["model"])
        self.model.eval()
        self.pairs = state["pairs"]
        torch.set_num_threads(threads)

    def __call__(self, question: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        encoded = self.tokenizer(
            [question] * len(passages),
            list(passages),
            truncation="only_second",
            max_length=MAX_TOKENS,
            padding=True,
            return_tensors="pt",
        ).to(self.device)
        with self.torch.inference_mode():
            return [float(x) for x in self.model(**encoded)]


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
        gold = _squash(data.articles[q.article].paragraphs[q.paragraph - 1])
        answer = coll.ask(q.question, top_k=args.rerank)
        cites = answer.citations

        def is_gold(c: Any, aid: int, gold: str = gold) -> bool:
            return c.article_id == aid and _squash(c.text) in gold

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
            _progress("evaluating", n + 1, len(questions), started, n + 1, len(questions))
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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m index.ops.train_reader", description=__doc__)
    p.add_argument("--train", type=Path, required=True, help="SQuAD-format training file")
    p.add_argument("--eval", type=Path, help="SQuAD-format file to evaluate on at the end")
    p.add_argument("--work", type=Path, default=Path("data/train-reader"), help="work folder")
    p.add_argument("--questions", type=int, default=16_000, help="questions mined (7 pairs each)")
    p.add_argument("--pool-articles", type=int, default=24, help="articles per mined collection")
    p.add_argument("--pairs", type=int, default=100_000, help="pairs to train on")
    p.add_argument("--layers", type=int, default=6, choices=range(1, 7), help="encoder depth")
    p.add_argument("--lr", type=float, default=4e-5, help="peak learning rate")
    p.add_argument("--groups-per-step", type=int, default=2, help="questions per step")
    p.add_argument("--threads", type=int, default=2, help="CPU threads")
    p.add_argument("--device", default="cpu", help="torch device: cpu, cuda")
    p.add_argument("--bf16", action="store_true", help="bfloat16 autocast (AVX-512 BF16, GPUs)")
    p.add_argument("--checkpoint-minutes", type=float, default=10.0, help="between checkpoints")
    p.add_argument("--rerank", type=int, default=20, help="rules' passages reordered at eval")
    p.add_argument("--eval-questions", type=int, help="evaluate on this many questions only")
    p.add_argument(
        "--stage", choices=["all", "mine", "train", "eval"], default="all", help="run one stage"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    pairs = work / "pairs.jsonl"
    if args.stage in ("all", "mine"):
        pairs = mine(args, work)
    checkpoint = work / "checkpoint.pt"
    if args.stage in ("all", "train"):
        checkpoint = train(args, work, load_groups(pairs))
    if args.stage in ("all", "eval") and args.eval:
        print(json.dumps(evaluate(args, work, checkpoint), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
