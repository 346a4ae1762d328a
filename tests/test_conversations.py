"""Conversations, feedback and server settings on each backend (the data folder, or the
PostgreSQL database that several processes share), and follow-up questions in the core."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from fault_tools import new_data_dir, run_cli

from index import Answer, Citation, Library
from index.cli import main
from index.storage import conversations
from index.storage.conversations import Conversations
from index.storage.schema_check import schema_problem

WARSAW = (
    "German Chancellor Olaf Scholz visited Warsaw on Monday for talks with the Polish "
    "government.\n\n"
    "He went there to sign an energy agreement that links the two countries' power grids.\n\n"
    "The visit was his first trip abroad this year."
)
LYON = (
    "The mayor of Lyon travelled to Paris on Friday.\n\n"
    "She went there because the city was hosting a climate summit on river flooding."
)


def answer(question: str, *article_ids: int, abstained: bool = False) -> Answer:
    citations = [
        Citation(n, aid, f"Story {aid}", None, 1, "text", "quote", 1.0)
        for n, aid in enumerate(article_ids, start=1)
    ]
    quoted = " ".join(f"Quoted from {c.title}. [{c.n}]" for c in citations)
    return Answer(question, quoted, abstained, citations)


def test_a_conversation_carries_its_questions_and_articles_across_a_reopen(
    make_stored_library: Callable[..., Library],
) -> None:
    store = make_stored_library().conversations()
    store.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    store.record("guild-1", 101, answer("Why?", 7, 8), conversation=100)
    store.close()

    reopened = make_stored_library().conversations()
    turns = reopened.history("guild-1", 100)
    assert [t.question for t in turns] == ["Who visited Warsaw?", "Why?"]
    assert turns[1].article_ids == (7, 8)
    assert reopened.turn("guild-1", 101) == turns[1]
    # Another server asking about the same key finds nothing.
    assert reopened.history("guild-2", 100) == [] and reopened.turn("guild-2", 101) is None


def test_old_answers_are_pruned_by_age_and_by_count_per_collection(
    make_stored_library: Callable[..., Library],
) -> None:
    now = [1_000_000.0]
    store = make_stored_library().conversations(max_age_s=3600, max_turns=2, clock=lambda: now[0])
    store.record("guild-1", 1, answer("one", 1))
    store.record("guild-2", 2, answer("elsewhere", 1))
    now[0] += 10
    store.record("guild-1", 3, answer("three", 1))
    store.record("guild-1", 4, answer("four", 1))
    assert store.turn("guild-1", 1) is None  # the third answer pushed out the oldest
    assert store.turn("guild-2", 2) is not None  # counted per collection
    now[0] += 3601
    assert store.turn("guild-1", 4) is None  # an hour later the conversation is over


def test_one_vote_per_member_per_answer_changed_but_never_counted_twice(
    make_stored_library: Callable[..., Library],
) -> None:
    store = make_stored_library().conversations()
    store.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    assert store.vote("guild-1", 100, 55, helpful=False) == "recorded"
    assert store.vote("guild-1", 100, 55, helpful=False) == "unchanged"
    assert store.vote("guild-1", 100, 66, helpful=False) == "recorded"
    assert (store.counts("guild-1").helpful, store.counts("guild-1").not_helpful) == (0, 2)
    assert store.vote("guild-1", 100, 55, helpful=True) == "changed"
    assert (store.counts("guild-1").helpful, store.counts("guild-1").not_helpful) == (1, 1)
    assert store.vote("guild-2", 100, 55, helpful=True) == "unknown"  # not that server's answer
    (vote, _) = store.votes(["guild-1"])
    assert vote.to_json()["question"] == "Who visited Warsaw?"
    assert vote.to_json()["citations"][0]["article_id"] == 7
    assert store.votes(["guild-2"]) == []


def test_a_follow_up_resolves_its_pronoun_from_the_earlier_question(library: Library) -> None:
    collection = library.collection()
    warsaw = collection.add_text(WARSAW, title="Scholz in Poland").article.id
    collection.add_text(LYON, title="Lyon mayor at the climate summit")
    alone = collection.ask("why did he go there?")
    followed = collection.ask("why did he go there?", earlier=["Who visited Warsaw?"])
    assert {c.article_id for c in alone.citations} != {warsaw}  # "he" could be anyone
    assert {c.article_id for c in followed.citations} == {warsaw}
    assert "energy agreement" in followed.answer
    assert followed.question == "why did he go there?"


def test_articlebot_feedback_exports_the_votes_as_json(
    make_stored_library: Callable[..., Library], capsys: pytest.CaptureFixture[str]
) -> None:
    library = make_stored_library()
    store = library.conversations()
    store.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    store.record("guild-2", 200, answer("What will the ferry cost?", 9))
    store.vote("guild-1", 100, 55, helpful=False)
    store.vote("guild-2", 200, 55, helpful=True)
    store.close()

    assert main(["feedback", "--collection", "guild-1", "--json"], library=library) == 0
    (vote,) = json.loads(capsys.readouterr().out)
    assert vote["question"] == "Who visited Warsaw?" and vote["helpful"] is False
    assert set(vote) == {
        "collection",
        "answer_id",
        "helpful",
        "question",
        "answer",
        "abstained",
        "citations",
        "voted_at",
        "written_by",
    }
    assert vote["written_by"] is None  # the articles' quotes were shown
    assert main(["feedback", "--not-helpful"], library=library) == 0
    line, blank, summary = capsys.readouterr().out.splitlines()
    assert "not helpful  guild-1  quoted  Who visited Warsaw?" in line
    assert summary == "quoted: 0 helpful, 1 not helpful (0% helpful)"


def written(question: str, *article_ids: int, model: str = "smollm2") -> Answer:
    return dataclasses.replace(answer(question, *article_ids), written_by=model)


def test_votes_say_which_kind_of_answer_they_judged_and_feedback_compares_them(
    make_stored_library: Callable[..., Library], capsys: pytest.CaptureFixture[str]
) -> None:
    """A vote keeps whether the answer shown was the articles' quotes or a model's words; a
    written answer that replaces the quoted one under the same message is what later votes
    judge, and a vote cast before it judged the quotes."""
    library = make_stored_library()
    store = library.conversations()
    store.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    store.vote("guild-1", 100, 55, helpful=False)  # on the quotes, before the edit
    store.record("guild-1", 100, written("Who visited Warsaw?", 7))
    store.vote("guild-1", 100, 56, helpful=True)
    store.record("guild-1", 101, written("Why did he go?", 7))
    store.vote("guild-1", 101, 55, helpful=True)
    store.close()

    assert main(["feedback", "--json"], library=library) == 0
    votes = json.loads(capsys.readouterr().out)
    assert [v["written_by"] for v in votes] == [None, "smollm2", "smollm2"]
    assert main(["feedback"], library=library) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "quoted: 0 helpful, 1 not helpful (0% helpful)",
        "written by smollm2: 2 helpful, 0 not helpful (100% helpful)",
    ]


def test_a_conversations_file_of_the_previous_release_opens_whole_and_keeps_its_votes(
    tmp_path: Path,
) -> None:
    """A data folder's conversations.db made before answers recorded their kind: the schema
    check takes it for whole (a restored backup), and opening it adds the column and keeps
    every conversation and vote."""
    path = tmp_path / conversations.FILE_NAME
    with sqlite3.connect(path) as db:
        db.executescript(conversations.FIRST_SCHEMA)
        db.execute(
            "INSERT INTO turns VALUES ('guild-1', 100, 100, 'Who?', 'Scholz. [1]', 0, '[]', ?)",
            (time.time(),),
        )
        db.execute(
            "INSERT INTO votes VALUES ('guild-1', 100, 55, 0, 'Who?', 'Scholz. [1]', 0, '[]', 1.0)"
        )
    with sqlite3.connect(path) as db:
        assert schema_problem(db, conversations.FILE_NAME, 0) is None
    store = Conversations.in_folder(tmp_path)
    assert store.turn("guild-1", 100) is not None
    (vote,) = store.votes()
    assert vote.question == "Who?" and vote.written_by is None
    store.record("guild-1", 101, written("Why?", 7))
    assert store.vote("guild-1", 101, 55, helpful=True) == "recorded"
    assert [v.written_by for v in store.votes()] == [None, "smollm2"]
    store.close()
    with sqlite3.connect(path) as db:  # and as it now is, whole for the check too
        assert schema_problem(db, conversations.FILE_NAME, 0) is None


def test_server_settings_are_kept_per_collection_across_a_reopen(
    make_stored_library: Callable[..., Library],
) -> None:
    settings = make_stored_library().collection_settings()
    settings.set("guild-1", "threads", False)
    settings.set("guild-1", "feed_channel", None)  # a choice, not an absence
    settings.set("guild-1", "threads", True)
    settings.close()

    reopened = make_stored_library().collection_settings()
    assert reopened.get("guild-1") == {"threads": True, "feed_channel": None}
    assert reopened.get("guild-2") == {}


# several processes on one PostgreSQL database


def test_two_processes_on_one_database_share_conversations_votes_and_settings(
    make_library: Callable[..., Library], database_url: str, tmp_path: Path
) -> None:
    # Two machines: two data folders, one database.
    one = make_library(tmp_path / "one", database_url=database_url)
    two = make_library(tmp_path / "two", database_url=database_url)
    here, there = one.conversations(), two.conversations()
    here.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    there.record("guild-1", 101, answer("Why?", 7, 8), conversation=100)
    assert [t.question for t in here.history("guild-1", 100)] == ["Who visited Warsaw?", "Why?"]

    assert here.vote("guild-1", 101, 55, helpful=True) == "recorded"
    assert there.vote("guild-1", 101, 55, helpful=True) == "unchanged"
    assert there.vote("guild-1", 101, 55, helpful=False) == "changed"
    assert here.counts("guild-1") == there.counts("guild-1")
    assert (here.counts("guild-1").helpful, here.counts("guild-1").not_helpful) == (0, 1)

    one.collection_settings().set("guild-1", "mention_channels", [42])
    assert two.collection_settings().get("guild-1") == {"mention_channels": [42]}
    assert not (tmp_path / "one" / "conversations.db").exists()


def test_a_database_of_the_previous_schema_gains_the_tables_and_keeps_its_articles(
    make_library: Callable[..., Library], database_url: str
) -> None:
    library = make_library(database_url=database_url)
    library.collection().add_text(WARSAW, title="Scholz in Poland")
    library.close()
    # As a release before conversations were kept in PostgreSQL left the database.
    with psycopg.connect(database_url, autocommit=True) as db:
        db.execute("DROP TABLE turns, votes, settings")
        db.execute("ALTER TABLE collections DROP COLUMN tokenizer")  # version 4
        db.execute("ALTER TABLE articles DROP COLUMN language")  # version 6
        db.execute("DROP TABLE sentence_vectors")  # version 7
        db.execute("DROP TABLE summaries")  # version 8
        db.execute("UPDATE articlebot_schema SET version = 2")

    reopened = make_library(database_url=database_url)
    store = reopened.conversations()
    store.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    assert store.turn("guild-1", 100) is not None
    assert [a.title for a in reopened.collection().articles()] == ["Scholz in Poland"]
    store.close()
    reopened.close()

    # As the release before answers recorded their kind left it (version 8), with a vote.
    with psycopg.connect(database_url, autocommit=True) as db:
        db.execute(
            "INSERT INTO votes SELECT collection, answer_id, 55, 0, question, answer, "
            "abstained, citations, 1.0 FROM turns"
        )
        db.execute("ALTER TABLE turns DROP COLUMN written_by")
        db.execute("ALTER TABLE votes DROP COLUMN written_by")
        db.execute("UPDATE articlebot_schema SET version = 8")
    again = make_library(database_url=database_url).conversations()
    (vote,) = again.votes(["guild-1"])
    assert vote.question == "Who visited Warsaw?" and vote.written_by is None
    again.record("guild-1", 101, written("Why did he go?", 7))
    again.vote("guild-1", 101, 55, helpful=True)
    assert [v.written_by for v in again.votes(["guild-1"])] == [None, "smollm2"]


def test_the_same_click_in_many_processes_at_once_is_one_vote(
    make_library: Callable[..., Library], database_url: str, tmp_path: Path
) -> None:
    libraries = [make_library(tmp_path / f"p{i}", database_url=database_url) for i in range(4)]
    stores = [library.conversations() for library in libraries]
    stores[0].record("guild-1", 100, answer("Who visited Warsaw?", 7))
    with ThreadPoolExecutor(8) as pool:
        outcomes = list(
            pool.map(lambda i: stores[i % 4].vote("guild-1", 100, 55, helpful=True), range(16))
        )
    assert sorted(outcomes) == ["recorded"] + ["unchanged"] * 15
    assert stores[1].counts("guild-1").helpful == 1


def test_articlebot_feedback_reads_the_votes_of_the_database(
    make_library: Callable[..., Library], database_url: str, tmp_path: Path, cli_models: Path
) -> None:
    store = make_library(tmp_path / "bot", database_url=database_url).conversations()
    store.record("guild-1", 100, answer("Who visited Warsaw?", 7))
    store.vote("guild-1", 100, 55, helpful=False)

    data_dir = new_data_dir(tmp_path / "cli", cli_models)  # another machine's empty folder
    done = run_cli(
        data_dir, "feedback", "--json", env_extra={"ARTICLEBOT_DATABASE_URL": database_url}
    )
    assert done.returncode == 0, done.stderr
    (vote,) = json.loads(done.stdout)
    assert vote["question"] == "Who visited Warsaw?" and vote["helpful"] is False
