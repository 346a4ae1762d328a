"""The reader's trainer: pairs mined through the project's own retrieval, a checkpoint that a
stopped run resumes from, and the same pairs from the same seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fault_tools import SQUAD_EXCERPT, new_data_dir, squad_file

from tools.reader_pairs import load_groups
from tools.train_reader import main


def test_pairs_are_mined_and_a_stopped_run_resumes_from_its_checkpoint(
    tmp_path: Path, cli_models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    train = squad_file(tmp_path, 6)
    work = tmp_path / "work"
    new_data_dir(work / "library", cli_models)  # the int8 export the session already made
    args = ["--train", str(train), "--work", str(work), "--questions", "6"]
    args += ["--pool-articles", "2", "--layers", "1", "--threads", "1"]
    assert main([*args, "--stage", "mine"]) == 0
    groups = load_groups(work / "pairs.jsonl")
    assert len(groups) == 6
    for g in groups:
        assert g.positive and g.negatives and g.others
        # the positive holds the answer; no negative does
        answer = next(
            a["answer"]
            for a in json.loads(SQUAD_EXCERPT.read_text(encoding="utf-8"))["articles"]
            if a["question"] == g.question
        )
        assert answer.lower() in g.positive.lower()
        assert all(answer.lower() not in n.lower() for n in g.negatives)

    # Mining again finds every question done and changes nothing.
    before = (work / "pairs.jsonl").read_bytes()
    assert main([*args, "--stage", "mine"]) == 0
    assert (work / "pairs.jsonl").read_bytes() == before

    # Two steps of two questions (7 pairs each), then the same run asked for four.
    assert main([*args, "--stage", "train", "--pairs", "28", "--groups-per-step", "2"]) == 0
    import torch

    first = torch.load(work / "checkpoint.pt", weights_only=False)
    assert (first["step"], first["pairs"]) == (2, 28)
    capsys.readouterr()
    assert main([*args, "--stage", "train", "--pairs", "56", "--groups-per-step", "2"]) == 0
    assert "resumed at step 2 (28 pairs)" in capsys.readouterr().err
    second = torch.load(work / "checkpoint.pt", weights_only=False)
    assert (second["step"], second["pairs"]) == (4, 56)


def test_the_evaluation_fuses_both_orders_and_weighs_a_difference_against_chance() -> None:
    from tools.reader_eval import _sign_test, fused_with_reader

    # The reader prefers the rules' third passage and puts their first one second.
    logits = [2.0, 0.0, 3.0, -1.0]
    assert fused_with_reader(logits, 0.0) == [0, 1, 2, 3]  # the rules alone
    assert fused_with_reader(logits, 1.0)[0] == 0  # equal weights: the rules' first stays
    assert fused_with_reader(logits, 4.0)[0] == 2  # a reader trusted four times over wins
    assert _sign_test(10, 10) == 1.0  # as many gained as lost: no evidence either way
    assert _sign_test(14, 10) > 0.5  # four questions of two dozen: chance
    assert _sign_test(20, 4) < 0.01
