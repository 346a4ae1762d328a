"""A data folder made by the release before languages (schema 5, all-MiniLM-L6-v2) opens with
this one, answers as it did with the model it was embedded with, and moves to the default model
and the language analysis with `rebuild --reembed`; only then is the old model let go."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from index import Library
from index.embedding.embedder import Embedder
from index.records import Answer

QUESTIONS = [
    ("Which judge awarded the damages?", 10),
    ("Where might ICE reopen an office?", None),
    ("Who announced the lawsuits?", None),
]


def _as_schema_5(data_dir: Path) -> None:
    """The data folder as the release before languages left it: no language column and no
    sentence vectors, version 5 (tests/storage/test_schema.py checks that the declaration and
    the upgrades agree)."""
    with sqlite3.connect(data_dir / "articlebot.db") as db:
        db.execute("DROP TABLE sentence_vectors")
        db.execute("DROP TABLE summaries")  # version 8
        db.execute("ALTER TABLE articles DROP COLUMN language")
        db.execute("PRAGMA user_version=5")


def _cited(answer: Answer) -> tuple[bool, list[tuple[str, int, str]]]:
    return answer.abstained, [(c.title, c.paragraph, c.text) for c in answer.citations]


def test_an_old_data_folder_answers_with_its_model_then_moves_with_reembed(
    embedder: Embedder,
    minilm_embedder: Embedder,
    sample_text: str,
    tmp_path: Path,
    make_library: Callable[..., Library],
) -> None:
    data_dir = tmp_path / "data"
    old_release = make_library(data_dir, embedder=minilm_embedder)
    old_release.collection().add_text(sample_text)
    before = [old_release.collection().ask(q) for q, _ in QUESTIONS]
    assert not any(answer.abstained for answer in before)
    old_release.close()
    _as_schema_5(data_dir)

    library = make_library(data_dir, embedder=embedder)
    collection = library.collection()
    (article,) = collection.articles()
    assert article.language is None  # not identified until the rebuild
    stats = collection.stats()
    assert (stats.model, stats.articles, stats.passages) == (minilm_embedder.name, 1, 14)
    # It answers from the same passages as the old release did. (Its quotes may choose other
    # sentences of them: this release weighs them by meaning too, and the folder has no stored
    # sentence vectors to put them in order by.)
    after = [collection.ask(q) for q, _ in QUESTIONS]
    assert [_cited(a) for a in after] == [_cited(b) for b in before]
    assert library._other_embedders.keys() == {minilm_embedder.name}

    result = collection.rebuild(reembed=True)
    assert result.passages == 14
    stats = collection.stats()
    assert (stats.model, stats.indexed) == (embedder.name, 14)
    assert collection.articles()[0].language == "en"
    assert library._other_embedders == {}  # no collection needs the old model any more
    for (question, paragraph), answer in zip(QUESTIONS, after, strict=True):
        moved = collection.ask(question)
        assert not moved.abstained
        if paragraph is not None:
            assert moved.citations[0].paragraph == paragraph == answer.citations[0].paragraph

    # A new collection in the same folder is made with the default model.
    fresh = library.collection("new")
    fresh.add_text(sample_text)
    assert fresh.stats().model == embedder.name
