"""The collection logic and the command line on real SQLite, FAISS and BM25 files, with the small
deterministic test embedder (fakes.py) instead of the model: the fast tier's core.

What a user notices of storage: articles numbered per collection, the same text stored once,
nothing crossing between collections, removal and rebuilds that keep counts whole, and the JSON
the command line prints. Answer quality is for the slow tier, with the real model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from index import ArticleNotFound, BadInput, Library
from index.cli import main
from index.text.profile import profile

DATA = Path(__file__).resolve().parent / "data"
FLOOD = (DATA / "flood-story.txt").read_text(encoding="utf-8")
FOREST = (DATA / "forest-article.txt").read_text(encoding="utf-8")


def cli(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, object]:
    code = main([*argv, "--json"], library=library)
    out, _ = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None


def test_articles_are_numbered_per_collection_and_stored_once(test_library: Library) -> None:
    news, other = test_library.collection("news"), test_library.collection("other")
    first = news.add_text(FLOOD)
    second = news.add_text(FOREST)
    again = news.add_text(FLOOD)
    elsewhere = other.add_text(FOREST)
    assert (first.added, second.added, again.added) == (True, True, False)
    assert again.article.id == first.article.id
    # each collection counts its own articles from 1
    assert sorted(a.number for a in news.articles()) == [1, 2] and elsewhere.article.number == 1
    assert news.stats().articles == 2 and other.stats().articles == 1


def test_a_copy_with_one_line_changed_is_reported_as_the_stored_article(
    test_library: Library,
) -> None:
    collection = test_library.collection()
    stored = collection.add_text(FLOOD).article
    update = FLOOD.replace("about 3,000 residents", "about 3,200 residents")
    result = collection.add_text(update)
    assert not result.added and result.near_duplicate
    assert result.article.id == stored.id and collection.stats().articles == 1


def test_nothing_crosses_between_collections(test_library: Library) -> None:
    test_library.collection("a").add_text(FLOOD)
    test_library.collection("b").add_text(FOREST)
    answer = test_library.collection("b").ask("Which river flooded Marlow?", top_k=5)
    assert {c.title for c in answer.citations} <= {"The Kestrel Forest"}
    answer = test_library.collection("a").ask("Which river flooded Marlow?", top_k=5)
    assert answer.citations and {c.title for c in answer.citations} == {
        "Marlow flood forces thousands from their homes"
    }


def test_removing_an_article_takes_its_passages_out_of_every_answer(
    test_library: Library,
) -> None:
    collection = test_library.collection()
    flood = collection.add_text(FLOOD).article
    collection.add_text(FOREST)
    before = collection.stats()
    collection.remove(flood.id)
    after = collection.stats()
    assert (after.articles, after.indexed) == (1, after.passages)
    assert after.passages < before.passages
    answer = collection.ask("Which river flooded Marlow?", top_k=5)
    assert all(c.article_id != flood.id for c in answer.citations)
    with pytest.raises(ArticleNotFound):
        collection.remove(flood.id)


def test_a_rebuild_keeps_every_passage_searchable(test_library: Library) -> None:
    collection = test_library.collection()
    collection.add_text(FLOOD)
    collection.add_text(FOREST)
    rebuilt = collection.rebuild()
    stats = collection.stats()
    assert rebuilt.passages == stats.passages == stats.indexed
    assert stats.dense_search == "exact"


def test_sentence_vectors_are_stored_with_each_passage_and_renewed_by_a_reembedding(
    tmp_path: Path,
) -> None:
    """Quotes are chosen by sentence vectors the add stored, one per sentence as the article's
    language splits it; a re-embedding writes the new model's, and the old ones are not read."""
    from fakes import HashingTestEmbedder

    first = Library(tmp_path / "data", embedder=HashingTestEmbedder())  # type: ignore[arg-type]
    collection = first.collection()
    article = collection.add_text(FLOOD).article
    store = collection.store
    passages = store.article_passages(collection.name, article.id)
    ids = [p.id for p in passages]
    stored = store.sentence_vectors(ids, "all-MiniLM-L6-v2", 384)
    language = profile(article.language)
    assert {pid: len(rows.vectors) for pid, rows in stored.items()} == {
        p.id: len(language.sentences(p.text)) for p in passages
    }
    first.close()

    other = HashingTestEmbedder(dim=128, name="second-model")
    second = Library(tmp_path / "data", embedder=other)  # type: ignore[arg-type]
    try:
        moved = second.collection()
        moved.rebuild(reembed=True)
        assert moved.stats().model == "second-model"
        renewed = moved.store.sentence_vectors(ids, "second-model", 128)
        assert {pid: rows.vectors.shape for pid, rows in renewed.items()} == {
            pid: (len(rows.vectors), 128) for pid, rows in stored.items()
        }
        assert moved.store.sentence_vectors(ids, "all-MiniLM-L6-v2", 384) == {}
        assert not moved.ask("Which river flooded Marlow?").abstained
    finally:
        second.close()


def test_empty_text_is_refused_in_one_sentence_and_loses_nothing(test_library: Library) -> None:
    collection = test_library.collection()
    collection.add_text(FLOOD)
    with pytest.raises(BadInput) as refused:
        collection.add_text("   \n\n  ")
    assert str(refused.value).count(".") == 1 and "paste" in str(refused.value)
    assert collection.stats().articles == 1


def test_the_command_lines_json_for_add_list_show_stats_remove(
    test_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    code, added = cli(test_library, capsys, "add", str(DATA / "flood-story.txt"))
    assert code == 0 and isinstance(added, dict)
    assert {"input", "added", "already_present", "article_id", "title"} <= set(added)
    assert added["added"] is True and added["already_present"] is False
    code, listed = cli(test_library, capsys, "list")
    assert code == 0 and isinstance(listed, list) and len(listed) == 1
    code, shown = cli(test_library, capsys, "show", str(added["article_id"]))
    assert isinstance(shown, dict)
    assert shown["title"] == "Marlow flood forces thousands from their homes"
    assert [p["paragraph"] for p in shown["passages"]][:3] == [1, 2, 3]
    code, stats = cli(test_library, capsys, "stats")
    assert isinstance(stats, dict) and stats["articles"] == 1
    assert stats["passages"] == stats["indexed"] == len(shown["passages"])
    code, _ = cli(test_library, capsys, "remove", str(added["article_id"]))
    assert code == 0
    code, stats = cli(test_library, capsys, "stats")
    assert isinstance(stats, dict) and stats["articles"] == 0
