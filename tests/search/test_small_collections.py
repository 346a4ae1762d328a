"""A new server's collection: one article, members asking in their own language. With the real
packaged model, the bundled demo article alone: what it never mentions is declined in every
language asked here (the best passage stands no further above unrelated text than chance), and
what it says is answered with the sentence that says it. The unrelated passages are the model's
own data: its vectors, for its export, and a threshold the tool that makes them fitted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from index import Library
from index.embedding.calibration import _unrelated
from index.embedding.registry import MULTILINGUAL_E5_SMALL
from index.ingest.readers import read_path

pytestmark = pytest.mark.slow  # the real model

DEMO = Path(__file__).parents[2] / "index" / "demo" / "tool-library.md"

# Questions on nothing the article says, each in another language and script.
NEVER = [
    "How many grams of flour does the recipe need?",
    "レシピには小麦粉が何グラム必要ですか？",
    "Qui a gagné le match de football hier soir ?",
    "Was ist die Hauptstadt von Australien?",
    "Кто выиграл футбольный матч вчера вечером?",
    "ما هي عاصمة أستراليا؟",
    "Ai đã thắng trận bóng đá tối qua?",
]
# Questions the article answers, with what the quote must hold.
ABOUT = {
    "How much did the council approve for the renovation?": "18,000",
    "¿Cuánto aprobó el ayuntamiento para la renovación?": "18,000",
    "図書館は最初にいくつの道具を持っていましたか？": "412",
    "Quanto a câmara aprovou para a renovação?": "18,000",
    # The answer is one sentence among others in its paragraph, and the paragraph's own vector
    # ranks another first: the best passages are read by their closest sentence too.
    "من الذي قاد مشروع مكتبة الأدوات؟": "Dana Whitfield",
    "Em que rua está a biblioteca de ferramentas?": "Quarry Street",
}


@pytest.fixture
def one_article(make_library: Callable[..., Library]) -> Library:
    library = make_library()
    assert library.embedder.name == MULTILINGUAL_E5_SMALL.id  # the default on x86-64
    library.collection().add(read_path(DEMO))
    return library


@pytest.mark.parametrize("question", NEVER)
def test_a_question_on_nothing_the_one_article_says_is_declined(
    one_article: Library, question: str
) -> None:
    assert one_article.collection().ask(question).abstained


@pytest.mark.parametrize("question", list(ABOUT))
def test_a_question_the_one_article_answers_is_answered_with_its_sentence(
    one_article: Library, question: str
) -> None:
    answer = one_article.collection().ask(question)
    assert not answer.abstained
    assert ABOUT[question] in answer.citations[0].quote


def test_the_unrelated_passages_are_the_models_own_data() -> None:
    unrelated = MULTILINGUAL_E5_SMALL.calibration.unrelated
    assert unrelated is not None and unrelated.foreign_allowance > 0
    table = _unrelated(unrelated.path)
    assert table.vectors.shape[1] == MULTILINGUAL_E5_SMALL.dim and len(table.vectors) >= 1000
    np.testing.assert_allclose(np.linalg.norm(table.vectors, axis=1), 1.0, atol=2e-3)
    with np.load(unrelated.path) as data:
        assert str(data["model"]) == MULTILINGUAL_E5_SMALL.id
    # A cosine above the mean of the nearest few of them, on e5's narrow range of cosines.
    assert 1 <= table.nearest <= 100 and -0.05 < table.threshold < 0.05
    # Whole paragraphs and pieces of a news paragraph's length, enough of each length band
    # for the nearest few to be on a question's subject.
    assert len(table.lengths) == len(table.vectors)
    for tokens in (40, 80, 160):
        within = np.abs(np.log(table.lengths / tokens)) <= np.log(table.band)
        assert within.sum() >= 1000, tokens
