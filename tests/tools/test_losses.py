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
from tools.bench.losses import ROWS, main


def test_each_question_falls_in_one_row_and_holds_is_what_eval_reports(
    tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    del embedder  # the session's export, made once: the collection embeds with it
    squad, data = squad_file(tmp_path, 30), tmp_path / "data"
    assert main([str(squad), "--data-dir", str(data)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["questions"] == 30
    assert sum(rows[row] for row in ROWS) == pytest.approx(1.0)
    assert 0.0 <= rows["declined_would_hold"] <= rows["declined"]

    assert cli(["eval", str(squad), "--data-dir", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["questions"] == rows["questions"]
    assert rows["holds"] == pytest.approx(report["containment_in_text"], abs=1e-4)
    assert rows["declined"] == pytest.approx(report["abstained"], abs=1e-4)
