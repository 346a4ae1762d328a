"""Where each answer is lost (`python -m tools.bench.losses`): every question in one row, and
the share whose answer holds a gold answer is the one `articlebot eval` reports for the same
questions, so that the rows explain the evaluation's figure rather than a figure of their own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fault_tools import squad_file

from index.cli import main as cli
from index.embedding.embedder import Embedder
from index.ops.eval_data import load_squad
from index.ops.eval_split import parts
from tools.bench.losses import ROWS, main


def test_each_question_falls_in_one_row_and_holds_is_what_eval_reports(
    tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    del embedder  # the session's export, made once: the collection embeds with it
    squad, data = squad_file(tmp_path, 30), tmp_path / "data"
    assert main([str(squad), "--data-dir", str(data)]) == 0
    rows = json.loads(capsys.readouterr().out)
    counts = rows["counts"]
    # By default only the questions about the report articles, which nothing chose on: a
    # quarter of each half's articles, one question each.
    reported = parts([a.title for a in load_squad(squad).articles]).count("report")
    assert rows["part"] == "report" and rows["questions"] == reported
    assert sum(counts[row] for row in ROWS) == reported, counts
    assert 0 <= counts["declined_would_hold"] <= counts["declined"]

    every = ["--data-dir", str(data), "--json", "--part", "report"]
    assert cli(["eval", str(squad), *every]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == rows["questions"]
    # eval reports shares; as counts of the same questions they must be the rows' counts.
    assert counts["holds"] == round(report["containment_in_text"] * report["questions"])
    assert counts["declined"] == round(report["abstained"] * report["questions"])
