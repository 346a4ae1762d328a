"""Fitting the weights that choose a quote's sentences as an operator runs it: training articles
added and asked through the real paths, a weights file the answers read, and the features kept
so that a second fit asks nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from fault_tools import squad_file

from index.answers.quote_choice import FEATURES, QuoteWeights
from index.embedding.embedder import Embedder
from tools.fit_quotes import main


def test_quote_weights_are_fitted_on_training_articles_and_read_back(
    tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    del embedder  # the session's export, made once: the fit's collections embed with it
    train = squad_file(tmp_path, 8)
    work, out = tmp_path / "work", tmp_path / "quote-weights.json"
    arguments = ["--train", str(train), "--work", str(work), "--articles", "6", "--pool", "3"]
    assert main([*arguments, "--every", "1", "--out", str(out)]) == 0
    # Two pools of three articles, each its own collection.
    assert capsys.readouterr().err.count("questions asked") == 2

    fitted = json.loads(out.read_text(encoding="utf-8"))
    assert fitted["features"] == list(FEATURES)
    assert all(math.isfinite(w) for w in fitted["weights"])
    assert fitted["fitted"]["questions_fitted"] >= 1
    assert "--articles 6 --pool 3 --every 1" in fitted["fitted"]["command"]
    weights = QuoteWeights.read(out)  # the file is one the answers can read
    assert weights.weights.shape == (len(FEATURES),)

    # Fitted again from the kept features: nothing is asked, and the weights are the same.
    again = tmp_path / "again.json"
    assert main([*arguments, "--every", "1", "--reuse", "--out", str(again)]) == 0
    assert "questions asked" not in capsys.readouterr().err
    assert json.loads(again.read_text(encoding="utf-8"))["weights"] == fitted["weights"]
    # The fit is checked on questions it did not see.
    assert 0.0 <= fitted["fitted"]["held_out_likeliest_holds"] <= 1.0

    # A feature held at zero, to measure what it brings, weighs nothing and still reads back.
    without = tmp_path / "without.json"
    assert (
        main([*arguments, "--reuse", "--without", "words", "--folds", "2", "--out", str(without)])
        == 0
    )
    held = json.loads(without.read_text(encoding="utf-8"))
    assert held["fitted"]["folds"] == 2
    assert held["weights"][FEATURES.index("words")] == 0.0
    assert held["fitted"]["without"] == ["words"]
    assert QuoteWeights.read(without).chances(np.zeros((2, len(FEATURES)))).sum() == 1.0

    # Features kept for another list of features are not fitted as if they were these.
    kept = dict(np.load(work / "features.npz"))
    np.savez(work / "features.npz", **{**kept, "features": np.array(FEATURES[:-1])})
    with pytest.raises(SystemExit, match="other features"):
        main([*arguments, "--reuse", "--out", str(tmp_path / "stale.json")])
