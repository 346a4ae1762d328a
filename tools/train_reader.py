"""Train the reader: a cross-encoder that reads a question together with one passage.

    python -m tools.train_reader --train ../shared/train/squad-v1.1-train.json \
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
3. evaluate: the questions about the `--eval` file's choose articles (reader_eval.py) asked
   of a collection of its articles; the rules' first `--rerank` passages reordered by the
   model; R@1 / R@5 of the rules, of the model alone, and of their blend, printed as JSON.

Seeds are fixed: the same arguments give the same pairs and, on one machine, the same weights.
Nothing from the evaluation file is trained on: it is read in stage 3 only.

For a GPU: reader_mine.py mines the pairs once, with e5's retrieval, into a folder small enough
to carry, and reader_train_device.py trains e5's layers from it on any device (the commands are
in its docstring, the figures in
docs/quality.md, "The reader on a device: ready for one short run").
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
from pathlib import Path

from tools.reader_eval import evaluate
from tools.reader_model import MAX_TOKENS, make_model
from tools.reader_pairs import HARD_NEGATIVES, OTHER_POOL, SEED, Group, load_groups, mine

__all__ = ["main"]


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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.train_reader", description=__doc__)
    p.add_argument("--train", type=Path, required=True, help="SQuAD-format training file")
    p.add_argument(
        "--eval", type=Path, help="SQuAD-format file: its choose questions judge at the end"
    )
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
    p.add_argument("--eval-questions", type=int, help="of its choose questions, this many")
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
