"""Summaries with the real model, as members and scripts meet them: `articlebot summary`,
`digest` and `ask --article`; an overview question in languages the phrasings do not hold; a
question of fact that stays one; every backend; an older release's data folder."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from index import Library
from index.cli import main

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "index" / "demo" / "tool-library.md"
SCRIPTS = ROOT / "tests" / "data" / "scripts"
FOREST = ROOT / "tests" / "data" / "forest-article.txt"

# Asked in languages (and wordings) that index/summaries/overview-phrasings.json does not hold.
OVERVIEWS = [
    "Waar gaat dit artikel over?",
    "O czym jest ten artykuł?",
    "Vad handlar artikeln om?",
    "Про що ця стаття?",
    "Despre ce este acest articol?",
    "Miről szól ez a cikk?",
    "Mistä tämä artikkeli kertoo?",
    "Περί τίνος πρόκειται αυτό το άρθρο;",
    "บทความนี้เกี่ยวกับอะไร",
    "این مقاله درباره چیست؟",
    "sum it up pls",
    "Riassumi l'articolo",
]


def run(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv), library=library)
    out, _ = capsys.readouterr()
    return code, out


def _stored_text(library: Library, capsys: pytest.CaptureFixture[str], article: int) -> str:
    _, out = run(library, capsys, "show", str(article), "--json")
    return "\n".join(p["text"] for p in json.loads(out)["passages"])


def test_summary_json_is_the_articles_own_sentences(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (DEMO, FOREST, *sorted(SCRIPTS.glob("*.txt"))):
        assert run(library, capsys, "add", str(path), "--json")[0] == 0
    code, out = run(library, capsys, "summary", "--all", "--json")
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 5  # every article has one
    for summary in lines:
        assert set(summary) == {"article_id", "title", "language", "summary", "sentences"}
        stored = _stored_text(library, capsys, summary["article_id"])
        assert 2 <= len(summary["sentences"]) <= 5
        for sentence in summary["sentences"]:
            assert set(sentence) == {"paragraph", "text"}
            assert sentence["text"] in stored
        assert all(s["text"] in summary["summary"] for s in summary["sentences"])
    languages = {s["language"] for s in lines}
    assert {"en", "hi", "fa"} <= languages
    code, out = run(library, capsys, "summary", "1", "--sentences", "3", "--json")
    assert len(json.loads(out)["sentences"]) == 3


def test_an_overview_question_gets_the_summary_and_a_question_of_fact_its_answer(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(library, capsys, "add", str(DEMO))
    _, out = run(library, capsys, "summary", "1", "--json")
    sentences = [s["text"] for s in json.loads(out)["sentences"]]
    # One article in the collection: no --article needed.
    for question in ["What is this article about?", "tl;dr?", *OVERVIEWS]:
        _, out = run(library, capsys, "ask", question, "--json")
        answer = json.loads(out)
        assert not answer["abstained"], question
        assert all(s in answer["answer"] for s in sentences), question
        assert all(c["quote"] in answer["answer"] for c in answer["citations"])
    _, out = run(library, capsys, "ask", "How much did the council approve?", "--json")
    assert "$18,000" in json.loads(out)["answer"]
    _, out = run(library, capsys, "ask", "What is the capital of Australia?", "--json")
    assert json.loads(out)["abstained"]


def test_with_several_articles_article_names_the_one_and_the_question_may_name_it(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(library, capsys, "add", str(DEMO))
    run(library, capsys, "add", str(FOREST))
    _, out = run(library, capsys, "summary", "1", "--json")
    demo = json.loads(out)["sentences"][0]["text"]
    for question in ["What is this article about?", "Resume el artículo", "要約して"]:
        _, out = run(library, capsys, "ask", question, "--article", "1", "--json")
        answer = json.loads(out)
        assert demo in answer["answer"] and {c["article_id"] for c in answer["citations"]} == {1}
    _, out = run(library, capsys, "ask", "What's the tool library story about?", "--json")
    assert demo in json.loads(out)["answer"]
    # Neither named: the newest, each with its first line, to choose from.
    _, out = run(library, capsys, "ask", "What is this article about?", "--json")
    listing = json.loads(out)
    assert {c["article_id"] for c in listing["citations"]} == {1, 2}
    assert "--article" in listing["answer"]
    _, out = run(library, capsys, "ask", "How much did the council approve?", "--article", "1")
    assert "$18,000" in out
    code = main(["ask", "What is it about?", "--article", "9"], library=library)
    assert code == 1 and "no article 9" in capsys.readouterr().err


def test_digest_lists_what_was_just_added_with_its_summary(
    library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    run(library, capsys, "add", str(DEMO))
    run(library, capsys, "add", str(FOREST))
    code, out = run(library, capsys, "digest", "--days", "1", "--json")
    assert code == 0
    digest = json.loads(out)["articles"]
    assert [a["article_id"] for a in digest] == [2, 1]  # newest first
    for article in digest:
        assert set(article) == {"article_id", "title", "url", "added", "summary"}
        assert article["summary"] and article["summary"] in _stored_text(
            library, capsys, article["article_id"]
        ).replace("\n", " ")


def test_each_backend_stores_the_summary_with_the_article(
    make_stored_library: Callable[..., Library],
) -> None:
    library = make_stored_library()
    collection = library.collection("summaries")
    added = collection.add_text(DEMO.read_text(encoding="utf-8")).article
    stored = collection.store.summaries("summaries", [added.id])[added.id]
    assert stored == collection.summary(added.id).sentences
    collection.remove(added.id)
    assert collection.store.summaries("summaries", [added.id]) == {}


def test_an_older_data_folder_gets_its_summaries_from_what_it_stored(
    make_library: Callable[..., Library], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "old"
    library = make_library(data_dir)
    library.collection().add_text(DEMO.read_text(encoding="utf-8"))
    expected = library.collection().summary(1).sentences
    library.close()
    with sqlite3.connect(data_dir / "articlebot.db") as db:  # as release 1.0.0 left it
        db.execute("DROP TABLE summaries")
        db.execute("PRAGMA user_version=7")
    reopened = make_library(data_dir)
    assert reopened.collection().store.summaries("default", [1]) == {}
    _, out = run(reopened, capsys, "ask", "What is this article about?", "--json")
    assert expected[0].text in json.loads(out)["answer"]
    assert reopened.collection().store.summaries("default", [1])[1] == expected
