"""A trained reader judged and exported: on the rules' passages the mining carried (any
machine), on a SQuAD-format file through the real retrieval (where the product runs), and as
its int8 ONNX export without the token table (reader_export.py)."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tools.reader_pack import MANIFEST_FILE, load_eval, pair_ids
from tools.reader_start import ReaderScorer, e5_weights, load_reader, score_ids

__all__ = ["evaluate_saved", "export", "judge_carried", "retrieval_reason"]

Log = Callable[[str], None]


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
    model: Any, rows: np.ndarray, pairs: Path, out: Path, pairs_trained: int, log: Log
) -> None:
    """reader_eval.judge on each `eval-*.npz` of the mined folder (the rules' passages of the
    questions about its file's choose articles, found where the retrieval runs): the
    per-question files and the summary under `out`."""
    from tools.reader_eval import judge

    manifest = json.loads((pairs / MANIFEST_FILE).read_text())
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


def retrieval_reason() -> str:
    """Why the evaluation's retrieval cannot run here, or ""."""
    try:
        importlib.import_module("index.library")
    except ImportError as exc:
        return f"the product's dependencies are not installed here ({exc.name})"
    return str(e5_weights().unavailable_reason())


def evaluate_saved(args: argparse.Namespace, folder: Path, log: Log) -> None:
    """reader_eval.py on the weights in `folder`, on the questions about the choose articles of
    `args.eval`; its files and summary written there."""
    from index.library import Library
    from index.settings import model_cache
    from tools.reader_eval import evaluate
    from tools.reader_mine import Tokens, tokenizer_of

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


def export(folder: Path, log: Log) -> None:
    """The int8 ONNX export of the reader in `folder`, under `folder`/onnx (reader_export.py)."""
    from tools.reader_export import export_reader, retrieval_export

    model, _, _ = load_reader(folder)
    sizes = export_reader(model, folder / "onnx", retrieval_export())
    log(f"int8 export, the token table the retrieval export's: {json.dumps(sizes)}")
