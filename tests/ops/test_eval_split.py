"""The fit / choose / report parts of an evaluation file: every figure the docs report is
measured on questions about articles no fit and no choice saw, so the parts must be the same
wherever the same articles are, balanced in both halves, and `eval --part` must ask only what
its part holds."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from fault_tools import squad_file

from index import Library
from index.cli import main
from index.ops.eval_data import load_squad
from index.ops.eval_split import PARTS, parts
from index.ops.evaluate import plan

TITLES = [f"Article {n}" for n in range(40)]


def test_each_half_is_split_a_half_a_quarter_and_a_quarter() -> None:
    drawn = parts(TITLES)
    for half in (drawn[:20], drawn[20:]):
        assert Counter(half) == {"fit": 10, "choose": 5, "report": 5}


def test_an_articles_part_is_read_from_the_titles_of_its_half_alone() -> None:
    # XQuAD's languages and SQuAD's development set hold the same articles in the same order:
    # a question about one of them must never fit in one file and report in another. Within a
    # half, the order does not matter; the other half's titles do not either.
    drawn = dict(zip(TITLES, parts(TITLES), strict=True))
    shuffled = TITLES[:20][::-1] + TITLES[20:][7:] + TITLES[20:][:7]
    assert dict(zip(shuffled, parts(shuffled), strict=True)) == drawn
    other_second_half = TITLES[:20] + [f"Other {n}" for n in range(20)]
    assert parts(other_second_half)[:20] == parts(TITLES)[:20]
    # Only the seed draws them again.
    assert parts(TITLES, seed=1) != parts(TITLES)


def test_the_three_parts_ask_every_question_once_and_index_the_same(tmp_path: Path) -> None:
    dataset = load_squad(squad_file(tmp_path, 8))
    drawn = parts([a.title for a in dataset.articles])
    for abstention in (False, True):
        plans = {p: plan(dataset, abstention=abstention, part=p) for p in PARTS}
        whole = plan(dataset, abstention=abstention)
        asked = [q.qid for p in plans.values() for q in p.questions]
        assert sorted(asked) == sorted(q.qid for q in whole.questions)
        for part, the_plan in plans.items():
            assert the_plan.indexed == whole.indexed
            assert {drawn[q.article] for q in the_plan.questions} <= {part}


def test_eval_part_refuses_a_span_of_articles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    squad = squad_file(tmp_path, 8)
    arguments = ["eval", str(squad), "--part", "report", "--articles", "0:4"]
    assert main([*arguments, "--data-dir", str(tmp_path / "data")]) == 1
    assert "Choose --articles or --part" in capsys.readouterr().err


def test_eval_reports_on_the_report_part_alone(
    tmp_path: Path, library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    squad = squad_file(tmp_path, 8)
    drawn = parts([a.title for a in load_squad(squad).articles])
    assert main(["eval", str(squad), "--part", "report", "--json"], library=library) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["part"] == "report"
    assert report["questions"] == drawn.count("report")  # one question an article
    assert main(["eval", str(squad), "--json"], library=library) == 0
    every = json.loads(capsys.readouterr().out)
    assert every["part"] is None and every["questions"] == 8
    assert every["passages"] == report["passages"]  # the same collection, asked less of
