"""The same collection behaviour on both backends: the embedded default (SQLite, FAISS files,
bm25s) and PostgreSQL with pgvector (`ARTICLEBOT_DATABASE_URL`), a real server started here.

What PostgreSQL adds, several processes writing one database at once and processes killed
halfway through, is exercised with real `articlebot` processes.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from fault_tools import (
    SampleArticle,
    cli_env,
    kill_after_output,
    new_data_dir,
    run_cli,
    start_cli,
    write_articles,
)
from sample_facts import MISSPELT_FACTS, SAMPLE_FACTS

from index import Library
from index.ingest.readers import read_path
from index.ingest.terms import TOKENIZER_VERSION
from index.text.profile import profile

pytestmark = pytest.mark.slow  # a real PostgreSQL server and real processes


@pytest.fixture(scope="module")
def articles(tmp_path_factory: pytest.TempPathFactory) -> list[SampleArticle]:
    return write_articles(tmp_path_factory.mktemp("articles"), count=30)


def cited(library: Library, question: str, collection: str = "default") -> list[tuple[str, int]]:
    answer = library.collection(collection).ask(question, top_k=3)
    return [(c.title, c.paragraph) for c in answer.citations]


# the contract, on each backend


def test_sample_article_facts_are_answered_and_cited(
    make_stored_library: Callable[..., Library], sample_path: Path
) -> None:
    library = make_stored_library()
    library.collection().add(read_path(sample_path))
    for question, fact in SAMPLE_FACTS + MISSPELT_FACTS:
        answer = library.collection().ask(question, top_k=5)
        assert not answer.abstained, question
        assert fact.casefold() in answer.answer.casefold(), question
        assert any(fact.casefold() in c.text.casefold() for c in answer.citations[:3]), question


def test_add_list_ask_remove_rebuild_and_stats(
    make_stored_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    library = make_stored_library()
    collection = library.collection()
    added = [collection.add(read_path(a.path)) for a in articles[:8]]
    assert all(r.added for r in added)
    assert not collection.add(read_path(articles[0].path)).added  # the same text is stored once
    assert [a.number for a in collection.articles()] == list(range(8, 0, -1))  # newest first

    for article in articles[:8]:
        assert cited(library, article.probe)[0][0] == article.title
    removed = added[3].article
    collection.remove(removed.id)
    assert removed.title not in {t for t, _ in cited(library, articles[3].probe)}

    stats = collection.stats()
    assert stats.articles == 7 and stats.indexed == stats.passages > 0
    before = {a.probe: cited(library, a.probe) for a in articles[:8]}
    result = collection.rebuild()
    assert result.passages == stats.passages
    assert {a.probe: cited(library, a.probe) for a in articles[:8]} == before


def test_each_passages_sentence_vectors_are_stored_where_its_passages_are(
    make_stored_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    """The sentence vectors quotes are chosen by, one row per sentence, on either backend."""
    collection = make_stored_library().collection()
    article = collection.add(read_path(articles[0].path)).article
    passages = collection.store.article_passages(collection.name, article.id)
    model = collection.store.collection_model(collection.name)
    assert model is not None
    stored = collection.store.sentence_vectors([p.id for p in passages], *model)
    language = profile(article.language)
    assert {pid: rows.vectors.shape for pid, rows in stored.items()} == {
        p.id: (len(language.sentences(p.text)), model[1]) for p in passages
    }


def test_collections_never_mix(
    make_stored_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    library = make_stored_library()
    library.collection("server-a").add(read_path(articles[0].path))
    library.collection("server-b").add(read_path(articles[1].path))
    assert {t for t, _ in cited(library, articles[0].probe, "server-b")} == {articles[1].title}
    assert [a.title for a in library.collection("server-a").articles()] == [articles[0].title]
    assert library.collection("server-c").ask(articles[0].probe).citations == []


def test_questions_about_one_article_stay_inside_it(
    make_stored_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    library = make_stored_library()
    ids = [library.collection().add(read_path(a.path)).article.id for a in articles[:5]]
    answer = library.collection().ask(articles[0].probe, article_ids=[ids[2]])
    assert {c.article_id for c in answer.citations} == {ids[2]}


def test_both_backends_give_the_same_answers(
    make_library: Callable[..., Library],
    database_url: str,
    tmp_path: Path,
    articles: list[SampleArticle],
) -> None:
    """Dense search, BM25 and the rankings agree: the same quotes from the same paragraphs."""
    embedded = make_library(tmp_path / "embedded")
    postgres = make_library(tmp_path / "postgres", database_url=database_url)
    for library in (embedded, postgres):
        for article in articles[:12]:
            library.collection().add(read_path(article.path))
    for article in articles[:12]:
        a = embedded.collection().ask(article.question)
        b = postgres.collection().ask(article.question)
        assert a.answer == b.answer and a.abstained == b.abstained
        assert [(c.title, c.paragraph, c.quote) for c in a.citations] == [
            (c.title, c.paragraph, c.quote) for c in b.citations
        ]
        # FAISS and pgvector sum a float32 inner product in different orders (pgvector 0.6
        # by its own loop): scores agree to float32's precision, not to the last bit, times
        # the model's cosine scale (10 for multilingual-e5-small).
        slope = embedded.collection().embedder().calibration.cosine_scale[0]
        assert [c.score for c in a.citations] == pytest.approx(
            [c.score for c in b.citations], rel=1e-5, abs=1e-6 * max(1.0, slope)
        )


# PostgreSQL with several processes


def test_kill_9_during_adds_leaves_no_half_stored_article(
    tmp_path: Path,
    cli_models: Path,
    database_url: str,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    """Three `kill -9`s at random moments of `articlebot add` into PostgreSQL: after each, every
    stored article has all its passages, all searchable; adding again stores exactly the 30."""
    reference = make_library(tmp_path / "reference").collection()
    whole = {
        r.article.title: r.article.passages
        for r in (reference.add(read_path(a.path)) for a in articles)
    }
    data_dir = new_data_dir(tmp_path / "data", cli_models)
    env = {"ARTICLEBOT_DATABASE_URL": database_url}
    rng = random.Random(int.from_bytes(os.urandom(4), "big"))
    files = [str(a.path) for a in articles]
    stored = 0
    for _ in range(3):
        proc = start_cli(data_dir, "add", *files, "--json", env=cli_env(data_dir, **env))
        kill_after_output(proc, lines=stored + 1, delay_s=rng.uniform(0, 0.3))
        listed = json.loads(run_cli(data_dir, "list", "--json", env_extra=env).stdout)
        assert all(a["passages"] == whole[a["title"]] for a in listed)
        report = json.loads(run_cli(data_dir, "stats", "--json", env_extra=env).stdout)
        assert report["indexed"] == report["passages"] == sum(a["passages"] for a in listed)
        assert report["articles"] == len(listed) >= stored
        stored = report["articles"]
    done = run_cli(data_dir, "add", *files, "--json", env_extra=env)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert sum(line["already_present"] for line in lines) == stored
    report = json.loads(run_cli(data_dir, "stats", "--json", env_extra=env).stdout)
    assert report["articles"] == 30 and report["passages"] == sum(whole.values())


def test_two_processes_adding_at_once_lose_nothing(
    tmp_path: Path,
    cli_models: Path,
    database_url: str,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    data_dir = new_data_dir(tmp_path / "data", cli_models)
    env = cli_env(data_dir, ARTICLEBOT_DATABASE_URL=database_url)
    # Each adds its half and, at the end, the same shared article.
    halves = [[str(a.path) for a in articles[i:28:2]] + [str(articles[29].path)] for i in (0, 1)]
    procs = [start_cli(data_dir, "add", *files, "--json", env=env) for files in halves]
    outputs = [proc.communicate(timeout=600) for proc in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
    shared = [json.loads(out.splitlines()[-1]) for out, _ in outputs]
    assert sorted(line["added"] for line in shared) == [False, True]
    assert shared[0]["article_id"] == shared[1]["article_id"]

    library = make_library(data_dir, database_url=database_url)
    collection = library.collection()
    assert len(collection.articles()) == 29
    assert sorted(a.number for a in collection.articles()) == list(range(1, 30))
    for article in articles[:28:3]:
        assert cited(library, article.probe)[0][0] == article.title


def test_migrate_carries_collections_over_and_they_answer_the_same(
    tmp_path: Path,
    cli_models: Path,
    database_url: str,
    make_library: Callable[..., Library],
    articles: list[SampleArticle],
) -> None:
    data_dir = new_data_dir(tmp_path / "data", cli_models)
    embedded = make_library(data_dir)
    for article in articles[:10]:
        embedded.collection("server-a").add(read_path(article.path), added_by="ada")
    embedded.collection("server-a").remove(embedded.collection("server-a").articles()[-1].id)
    embedded.collection("server-b").add(read_path(articles[10].path))
    passages = sum(embedded.collection(n).stats().passages for n in ("server-a", "server-b"))
    chosen = embedded.collection_settings()
    chosen.set("server-a", "editor_role", "1234")  # what an admin chose in /settings
    chosen.close()
    embedded.close()
    empty = new_data_dir(tmp_path / "empty")
    wrong = run_cli(empty, "migrate", "--to", database_url)
    assert wrong.returncode == 1 and "--data-dir" in wrong.stderr

    moved = run_cli(data_dir, "migrate", "--to", database_url, "--json")
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout) == {
        "collections": 2,
        "articles": 10,
        "already_present": 0,
        "passages": passages,
        "feeds": 0,
        "server_rows": 1,
    }
    again = json.loads(run_cli(data_dir, "migrate", "--to", database_url, "--json").stdout)
    assert again["articles"] == 0 and again["already_present"] == 10

    source, target = make_library(data_dir), make_library(data_dir, database_url=database_url)
    assert target.collection_settings().get("server-a") == {"editor_role": "1234"}
    for name in ("server-a", "server-b"):
        was, now = source.collection(name).articles(), target.collection(name).articles()
        assert [(a.number, a.title, a.added_by, a.added_at) for a in was] == [
            (a.number, a.title, a.added_by, a.added_at) for a in now
        ]
        # Each summary travels with its article, as it was chosen.
        summaries = target.collection(name).store.summaries(name, [a.id for a in now])
        assert [summaries[a.id] for a in now] == [
            source.collection(name).summary(a.id).sentences for a in was
        ]
    for article in articles[:11]:
        name = "server-b" if article is articles[10] else "server-a"
        a, b = (
            source.collection(name).ask(article.question),
            target.collection(name).ask(article.question),
        )
        assert (a.answer, [c.paragraph for c in a.citations]) == (
            b.answer,
            [c.paragraph for c in b.citations],
        )


def test_postgresql_postings_of_an_older_tokenizer_are_derived_again(
    database_url: str, make_library: Callable[..., Library], articles: list[SampleArticle]
) -> None:
    library = make_library(database_url=database_url)
    for article in articles[:5]:
        library.collection().add(read_path(article.path))
    before = [library.collection().ask(a.question).answer for a in articles[:5]]
    library.close()
    # As a database written before the tokenizer last changed: every word stored otherwise.
    with psycopg.connect(database_url, autocommit=True) as db:
        db.execute("UPDATE postings SET term = term || '_old'")
        db.execute("UPDATE collections SET tokenizer = 1")

    upgraded = make_library(database_url=database_url)
    assert [upgraded.collection().ask(a.question).answer for a in articles[:5]] == before
    with psycopg.connect(database_url, autocommit=True) as db:
        stale = db.execute("SELECT count(*) FROM postings WHERE right(term, 4) = '_old'").fetchone()
        assert stale == (0,)
        assert db.execute("SELECT DISTINCT tokenizer FROM collections").fetchall() == [
            (TOKENIZER_VERSION,)
        ]


def test_a_database_that_cannot_be_reached_is_one_clear_line(tmp_path: Path) -> None:
    data_dir = new_data_dir(tmp_path / "data")
    bad = run_cli(
        data_dir,
        "list",
        env_extra={"ARTICLEBOT_DATABASE_URL": f"postgresql://bot:secret@/none?host={tmp_path}"},
    )
    assert bad.returncode == 1
    assert bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
    assert "ARTICLEBOT_DATABASE_URL" in bad.stderr and "secret" not in bad.stderr
    wrong = run_cli(data_dir, "list", env_extra={"ARTICLEBOT_DATABASE_URL": "mysql://x"})
    assert wrong.returncode == 1 and "postgresql://" in wrong.stderr


def test_bench_times_postgresql_and_finds_the_exact_top_10(
    tmp_path: Path, database_url: str
) -> None:
    """Exact search in a small collection: recall against exact search is whole."""
    done = run_cli(
        new_data_dir(tmp_path / "data"),
        "bench",
        "--passages",
        "1500",
        "--queries",
        "50",
        "--database-url",
        database_url,
        "--json",
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["passages"] == 1500 and result["index"] == "postgresql-flat"
    assert result["recall_at_10"] == 1.0
