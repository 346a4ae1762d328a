"""Questions asked in another language than the articles': the question's vector is moved
toward the articles' language before it searches (`Calibration.across_languages`, with the
model's table of languages). With the real packaged model, on English XQuAD articles with
questions in other languages (../shared)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from index import Library
from index.cli import main
from index.embedding.base import Embedder
from index.embedding.calibration import Calibration
from index.embedding.registry import MULTILINGUAL_E5_SMALL
from index.text.languages import WIDELY_WRITTEN
from tools.language_offsets import main as make_table

pytestmark = pytest.mark.slow  # the real model


# With every article indexed, the share of such questions declined, at most. The judgement
# declines more of the questions in another language than the articles' than it did (0.68-0.74
# of those about missing articles on the report part, 0.58-0.61 before), and so more of these
# too: 0.155 of 400 Chinese questions (0.115 before; 0.145 of the 200 asked here), 0.178 of
# Arabic ones (0.133-0.161).
# Loosened in the commit of the judgement that declines more (306ae3c: 0.15 -> 0.20, which its
# 0.155 would have failed; Arabic 0.20 -> 0.22): a loss taken for the declines above, said so
# here and in docs/development.md, "Tests".
DECLINED_PRESENT = 0.20
DECLINED_PRESENT_ARABIC = 0.22


@pytest.fixture(scope="module")
def english_articles(
    embedder: Embedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Library]:
    """One library for the files that share XQuAD's English articles (questions in Chinese, in
    Arabic): the second file's evaluation finds them stored and embeds nothing again."""
    library = Library(tmp_path_factory.mktemp("xquad-english"), embedder=embedder)
    yield library
    library.close()


def _eval(
    library: Library,
    path: Path,
    capsys: pytest.CaptureFixture[str],
    *more: str,
    questions: int = 200,
) -> dict[str, float]:
    arguments = ["eval", str(path), "--questions", str(questions), "--json", *more]
    assert main(arguments, library=library) == 0
    report = json.loads(capsys.readouterr().out)
    if "answered" in report:
        return report
    return {**report["recall"], "declined": report["abstained"]}


def test_questions_in_another_language_find_more_answers_moved_toward_the_articles(
    english_articles: Library,
    eval_file: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chinese = eval_file("xquad_en-ctx_zh-q.json")
    moved = _eval(english_articles, chinese, capsys)
    monkeypatch.setattr(Calibration, "across_languages", lambda *_: None)
    as_asked = _eval(english_articles, chinese, capsys)
    assert moved["@1"] > as_asked["@1"] and moved["@5"] > as_asked["@5"], (moved, as_asked)
    assert moved["@5"] >= 0.90 and moved["declined"] <= DECLINED_PRESENT, moved


def test_arabic_questions_about_english_articles_find_their_paragraph(
    english_articles: Library,
    eval_file: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 400 questions: Arabic's declines (0.178 of 400) sit near their bound, which 200 of them
    # (0.22) would read as reached.
    report = _eval(english_articles, eval_file("xquad_en-ctx_ar-q.json"), capsys, questions=400)
    assert report["@5"] >= 0.90 and report["declined"] <= DECLINED_PRESENT_ARABIC, report


def test_questions_in_another_language_about_missing_articles_are_mostly_declined(
    library: Library, eval_file: Callable[[str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # Half of the articles indexed: a Chinese question about one of the others is declined, not
    # answered from the closest paragraph (0.235 declined before the fitted judgement).
    report = _eval(library, eval_file("xquad_en-ctx_zh-q.json"), capsys, "--abstention")
    assert report["answered"] >= 0.80 and report["abstained"] >= 0.50, report


def test_the_language_table_is_this_models_and_covers_every_language_a_question_is_read_in(
    embedder: Embedder, cli_models: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = MULTILINGUAL_E5_SMALL.calibration.languages
    assert table is not None
    for language in WIDELY_WRITTEN:
        assert table.step(language, {"en": 1}) is not None, language
    # The command that makes the table, run for two languages with the running export, measures
    # what the shipped table holds.
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "models").symlink_to(cli_models, target_is_directory=True)
    out = tmp_path / "table.npz"
    arguments = ["--out", str(out), "--data-dir", str(tmp_path / "data"), "--languages", "de", "zh"]
    assert make_table(arguments) == 0
    assert f"3 languages -> {out}" in capsys.readouterr().out
    with np.load(out) as made:
        assert [str(x) for x in made["languages"]] == ["en", "de", "zh"]
        for i, language in enumerate(["en", "de", "zh"]):
            for measured, stored in [
                (made["offsets"][i], table.step(language, {"en": 1})),
                (made["centres"][i], table.centre(language)),
            ]:
                assert stored is not None
                if language == "en" and not measured.any():
                    assert not stored.any()  # English is where the steps start
                    continue
                measured = measured.astype(np.float32)
                cosine = float(measured @ stored) / float(
                    np.linalg.norm(measured) * np.linalg.norm(stored)
                )
                assert cosine > 0.99, (language, cosine)
    # From German articles, a Chinese question's step is the one from German to Chinese.
    both = table.step("zh", {"de": 1})
    assert both is not None
    np.testing.assert_allclose(
        both, table.step("zh", {"en": 1}) - table.step("de", {"en": 1}), atol=1e-6
    )
    assert table.step("xx", {"en": 1}) is None  # unknown: the question as it is


@pytest.mark.parametrize("language", ["vi", "zh"])
def test_questions_about_missing_articles_are_declined_in_languages_whose_texts_look_alike(
    language: str,
    library: Library,
    eval_file: Callable[[str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Half of XQuAD's articles indexed: e5 finds Chinese texts alike, and any Vietnamese story
    holds many of a question's syllables, yet questions about the missing half are declined
    and those about the indexed half answered (the language's centre, word evidence beyond
    chance)."""
    path = eval_file(f"xquad.{language}.json")
    arguments = ["eval", str(path), "--abstention", "--questions", "200", "--json"]
    assert main(arguments, library=library) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["answered"] >= 0.85 and report["abstained"] >= 0.80, report
