"""Fitting the judgement of declines as an operator runs it: the weights file a collection reads,
sets indexed whole beside half-indexed ones, and features kept so that a second run asks only
the sets it does not hold."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from fault_tools import squad_file

from index.embedding.embedder import Embedder
from index.ops.eval_data import load_squad
from index.ops.eval_split import PARTS, parts
from index.search.relevance import FEATURES, Judgement
from tools.declines_evidence import parse
from tools.fit_declines import FIELDS, fit, main


def test_a_judgement_is_fitted_on_half_indexed_and_whole_sets_and_read_back(
    tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    del embedder  # the session's export, made once: the fit's collections embed with it
    squad = squad_file(tmp_path, 8)
    half, whole = f"{squad}@{tmp_path / 'half'}", f"{squad}@{tmp_path / 'whole'}=whole"
    features, out = tmp_path / "features.npz", tmp_path / "declines.json"
    assert main([half, whole, "--features", str(features), "--out", str(out)]) == 0
    assert capsys.readouterr().err.count("asking") == 2

    fitted = json.loads(out.read_text(encoding="utf-8"))
    assert fitted["features"] == list(FEATURES)
    assert all(math.isfinite(w) for w in fitted["weights"]) and math.isfinite(fitted["bias"])
    assert [s.get("whole", False) for s in fitted["fitted_on"]] == [False, True]
    Judgement.load(out)  # the file is one retrieval can read

    # Asked without its own article, a question of a whole set is read at the whole
    # collection's size, as one about an absent article would be: size alone cannot tell the
    # two kinds of question apart.
    kept = np.load(features)
    rows, labels = kept["train/whole/x"], kept["train/whole/y"]
    sizes = rows[:, FIELDS.index("passages")]
    assert set(labels) == {0, 1} and len(set(sizes)) == 1 and sizes[0] == 24  # 8 x 3 paragraphs

    # Fitted again from the kept features: nothing is asked, and the weights are the same.
    again = tmp_path / "again.json"
    assert main([half, whole, "--features", str(features), "--reuse", "--out", str(again)]) == 0
    assert "asking" not in capsys.readouterr().err
    assert json.loads(again.read_text(encoding="utf-8"))["weights"] == fitted["weights"]

    # The file says how it was fitted, so that it can be fitted again as it was: a set weighed
    # more moves the weights, and the file records it.
    weighed = tmp_path / "weighed.json"
    more = ["--weigh", "train/whole=3", "--ridges", str(fitted["ridge"])]
    assert (
        main([half, whole, "--features", str(features), "--reuse", *more, "--out", str(weighed)])
        == 0
    )
    refit = json.loads(weighed.read_text(encoding="utf-8"))
    assert refit["weighed"] == {"train/whole": 3.0} and fitted["weighed"] == {}
    assert refit["ridge"] == fitted["ridge"] and refit["weights"] != fitted["weights"]

    # A feature left out keeps the weight 0, and the file says it was left out; the ridge kept
    # is one of those tried, each with its shortfall on the choose questions.
    without = tmp_path / "without.json"
    args = ["--reuse", "--without", "cosine", "--ridges", "10,1000", "--out", str(without)]
    assert main([half, whole, "--features", str(features), *args]) == 0
    lean = json.loads(without.read_text(encoding="utf-8"))
    assert lean["weights"][FEATURES.index("cosine")] == 0.0 and lean["without"] == ["cosine"]
    assert set(lean["ridges_tried"]) == {"10", "1000"} and lean["ridge"] in (10.0, 1000.0)
    with pytest.raises(SystemExit, match="No feature 'cosin'"):
        main([half, whole, "--features", str(features), "--reuse", "--without", "cosin"])

    # Every set's figures are counts of its questions about the fit and choose articles, each
    # question counted once; the report part's are measured apart, never by the fitting tool.
    whole_rows = fitted["figures"]["train/whole"]
    assert set(whole_rows) == {"fit", "choose"}
    reported = int((kept["train/whole/part"] == PARTS.index("report")).sum())
    assert reported > 0
    assert (
        sum(p["answerable"] + p["unanswerable"] for p in whole_rows.values())
        == len(labels) - reported
    )
    assert all(p["answered"] <= p["answerable"] for p in whole_rows.values())

    # Moving the bias, on the choose questions: no offset gives the choose part's own counts; a
    # higher one answers at least as many questions and declines at most as many.
    capsys.readouterr()
    assert main([half, whole, "--features", str(features), "--reuse", "--sweep", "0,2"]) == 0
    printed = capsys.readouterr().out
    assert "report" not in printed
    swept = [json.loads(line) for line in printed.splitlines() if line.startswith('{"offset"')]
    assert [s["offset"] for s in swept] == [0.0, 2.0]
    at_zero, raised = (s["sets"]["train/whole"] for s in swept)
    assert raised["answered"] >= at_zero["answered"] and raised["declined"] <= at_zero["declined"]
    choose = whole_rows["choose"]
    assert at_zero["answered"] == choose["answered"] / choose["answerable"]
    assert at_zero["declined"] == choose["declined"] / choose["unanswerable"]

    # A set added to them is the only one asked (a training set of one article that fits).
    first = parts([a.title for a in load_squad(squad).articles]).index("fit")
    more = f"{squad}@{tmp_path / 'more'}:{first}:{first + 1}=train"
    assert main([half, whole, more, "--features", str(features), "--reuse"]) == 0
    assert capsys.readouterr().err.splitlines() == [f"asking train[{first}:{first + 1}]/train"]

    # Evidence kept before a field was added cannot be fitted as if it held it: asked again.
    older = tmp_path / "older.npz"
    fields_now = dict(np.load(features))
    np.savez(older, **{k: v[:, :-1] if k.endswith("/x") else v for k, v in fields_now.items()})
    with pytest.raises(SystemExit, match="fit without --reuse to ask its sets again"):
        main([half, whole, "--features", str(older), "--reuse"])


def test_a_training_set_may_not_fit_on_articles_another_set_reports_on(
    tmp_path: Path, embedder: Embedder
) -> None:
    del embedder
    squad = squad_file(tmp_path, 8)
    half = f"{squad}@{tmp_path / 'half'}"
    leaking = f"{squad}@{tmp_path / 'train'}:0:4=train"  # the first half: each part's articles
    with pytest.raises(SystemExit, match="is a (choose|report) article in train .* fit article in"):
        main([half, leaking, "--features", str(tmp_path / "f.npz")])
    # Kept as fitting only, the same span is not read back as a set that reports.
    assert parse(leaking).name != parse(leaking.removesuffix("=train")).name


def test_the_fit_solves_the_weighted_logistic_loss_with_a_ridge_on_the_weights_alone() -> None:
    # The documented objective: the weighted log loss plus half the ridge times the squared
    # weights, the bias free. At its minimum the gradient is zero; a held feature stays at 0.
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 4))
    y = (x @ np.array([1.5, -1.0, 0.5, 0.0]) + 0.3 + rng.normal(size=400) > 0).astype(float)
    weight = rng.uniform(0.5, 2.0, size=400)
    held = np.array([False, False, False, True])
    for ridge in (1.0, 100.0):
        weights, bias = fit(x, y, weight, ridge, held)
        assert weights[3] == 0.0
        p = 1 / (1 + np.exp(-(x @ weights + bias)))
        gradient = x[:, ~held].T @ (weight * (p - y)) + ridge * weights[~held]
        assert np.abs(gradient).max() < 1e-4 and abs(float(weight @ (p - y))) < 1e-4
    # A stronger ridge draws the weights toward 0.
    assert np.abs(fit(x, y, weight, 1_000.0, held)[0]).sum() < np.abs(weights).sum()
