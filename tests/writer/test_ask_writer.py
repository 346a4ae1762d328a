"""`articlebot ask` with a writer, from outside: no writer changes nothing; the scripted fake's
every misbehaviour gets the quoted answer with why, within the timeout; a real llama-server
with SmolLM2-135M, configured through the environment, gives sound answers to four questions
about two articles, each written or quoted with the reason."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_writer import SCENARIOS, FakeWriterServer
from llama_server import LlamaServer

from index import Library
from index.cli import main
from index.embedding.embedder import Embedder
from index.messages import translate
from index.writer import SUMMARY_QUESTION, WriterSettings

FLOOD_QUESTION = "How many residents of Marlow had to leave their homes?"
LIBRARY_QUESTION = "When will the Marlow library close on Fridays?"
QUESTIONS = [
    "When did logging in the Kestrel Forest end?",
    "How large is the Kestrel Forest?",
    "Where is the Kestrel Forest?",
    "What is the Kestrel Forest known for?",
    FLOOD_QUESTION,
    "Where were the residents who left their homes taken?",
    "How long had rain fallen before the river broke through the levee?",
    "When did the river last flood the lower streets?",
]
TIMEOUT_S = 3.0
QUOTED = re.compile(r"“([^”]{1,600})”|«([^»]{1,600})»|「([^」]{1,600})」")
PINGS = re.compile(r"@(?:everyone|here)\b|<@[!&]?\d+>")


def one_line(text: str) -> str:
    return " ".join(text.split()).replace("’", "'")


def assert_sound(answer: dict[str, Any]) -> None:
    """Every `[n]` among its citations, every quote verbatim in its passage, nothing pings,
    and either written (by a model) or quoted with the reason."""
    numbers = {c["n"] for c in answer["citations"]}
    assert {int(n) for n in re.findall(r"\[(\d+)\]", answer["answer"])} <= numbers
    passages = [one_line(c["text"]) for c in answer["citations"]]
    for match in QUOTED.finditer(answer["answer"]):
        span = one_line(next(g for g in match.groups() if g)).strip(" .,;:!?")
        assert any(part in p for part in span.split(" … ") for p in passages), span
    for c in answer["citations"]:
        assert all(one_line(part) in one_line(c["text"]) for part in c["quote"].split(" … "))
    assert not PINGS.search(answer["answer"])
    assert (answer["written_by"] is None) == (answer["writer_fallback"] is not None)


def ask_json(library: Library, capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    assert main(["ask", *argv, "--json"], library=library) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def articles(article_paths: dict[str, Path]) -> Callable[[Library], None]:
    def add(library: Library) -> None:
        collection = library.collection()
        for path in article_paths.values():
            title, text = path.read_text(encoding="utf-8").split("\n\n", 1)
            collection.add_text(text, title=title)

    return add


def test_without_a_writer_answers_are_quoted_and_nothing_else_changes(
    make_library: Callable[..., Library],
    articles: Callable[[Library], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    library = make_library()
    articles(library)
    before = library.collection().ask(FLOOD_QUESTION).to_json()
    answer = ask_json(library, capsys, FLOOD_QUESTION)
    assert (answer.pop("written_by"), answer.pop("writer_fallback")) == (None, "not configured")
    assert answer == {k: before[k] for k in answer}
    assert_sound({**answer, "written_by": None, "writer_fallback": "not configured"})


def test_no_writer_turns_a_configured_one_off(
    make_library: Callable[..., Library],
    articles: Callable[[Library], None],
    fake_writer: FakeWriterServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    library = make_library(writer=WriterSettings(fake_writer.url("good"), "fake-model"))
    articles(library)
    asked = len(fake_writer.requests)
    answer = ask_json(library, capsys, FLOOD_QUESTION, "--no-writer")
    assert answer["writer_fallback"] == "turned off (--no-writer)"
    assert len(fake_writer.requests) == asked
    written = ask_json(library, capsys, FLOOD_QUESTION)
    assert written["written_by"] == "fake-model" and written["writer_fallback"] is None
    assert written["citations"][0]["text"] == answer["citations"][0]["text"]
    assert_sound(written)


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_each_misbehaviour_of_the_fake_gets_the_quoted_answer_with_its_reason(
    make_library: Callable[..., Library],
    articles: Callable[[Library], None],
    fake_writer: FakeWriterServer,
    capsys: pytest.CaptureFixture[str],
    scenario: str,
) -> None:
    writer = WriterSettings(fake_writer.url(scenario), "fake-model", timeout_s=TIMEOUT_S)
    library = make_library(writer=writer)
    articles(library)
    question = LIBRARY_QUESTION if scenario == "obeys" else FLOOD_QUESTION
    quoted = library.collection().ask(question)
    started = time.monotonic()
    answer = ask_json(library, capsys, question)
    assert time.monotonic() - started < TIMEOUT_S + 5
    assert answer["written_by"] is None
    assert SCENARIOS[scenario] in answer["writer_fallback"]
    assert answer["answer"] == quoted.answer and not answer["abstained"]
    assert_sound(answer)


def test_chat_is_worded_by_the_writer_when_it_checks_out_and_quoted_otherwise(
    make_library: Callable[..., Library],
    articles: Callable[[Library], None],
    fake_writer: FakeWriterServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for scenario, written in (("good", True), ("fabricated-quote", False)):
        library = make_library(writer=WriterSettings(fake_writer.url(scenario), "fake-model"))
        articles(library)
        quoted = library.collection().ask(FLOOD_QUESTION)
        monkeypatch.setattr(sys, "stdin", io.StringIO(FLOOD_QUESTION + "\n"))
        assert main(["chat"], library=library) == 0
        out = capsys.readouterr().out
        assert ("Written by fake-model, from these sources:" in out) is written
        assert written or quoted.answer in out
        monkeypatch.setattr(sys, "stdin", io.StringIO(FLOOD_QUESTION + "\n"))
        assert main(["chat", "--no-writer"], library=library) == 0
        out = capsys.readouterr().out
        assert quoted.answer in out and "Written by" not in out


def _process(env_extra: dict[str, str], data_dir: Path, *argv: str, stdin: str = "") -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ARTICLEBOT_LLM_", "OPENAI_"))}
    env.update(env_extra, ARTICLEBOT_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1")
    # An OPENAI_ setting is never read: one that would break every request is set on purpose.
    env.update(OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="sk-never-read")
    done = subprocess.run(
        [sys.executable, "-m", "index", *argv],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _batch(env: dict[str, str], data_dir: Path, questions: list[str]) -> list[dict[str, Any]]:
    lines = "".join(json.dumps({"question": q}) + "\n" for q in questions)
    out = _process(env, data_dir, "ask", "--batch", "-", "--json", stdin=lines)
    return [json.loads(line) for line in out.splitlines()]


def _added(tmp_path: Path, article_paths: dict[str, Path], *names: str) -> Path:
    data_dir = tmp_path / "data"
    _process({}, data_dir, "add", *(str(article_paths[n]) for n in names), "--json")
    return data_dir


def test_the_process_reads_the_writer_from_its_environment(
    embedder: Embedder,
    tmp_path: Path,
    article_paths: dict[str, Path],
    fake_writer: FakeWriterServer,
) -> None:
    data_dir = _added(tmp_path, article_paths, "flood", "library")
    env = {
        "ARTICLEBOT_LLM_BASE_URL": fake_writer.url("fabricated-quote"),
        "ARTICLEBOT_LLM_MODEL": "fake-model",
        "ARTICLEBOT_LLM_API_KEY": "sk-test-from-env",
    }
    (fabricated,) = _batch(env, data_dir, [FLOOD_QUESTION])
    assert "quote in [1] not in the passage" in fabricated["writer_fallback"]
    assert fake_writer.requests[-1][1]["Authorization"] == "Bearer sk-test-from-env"
    env["ARTICLEBOT_LLM_BASE_URL"] = fake_writer.url("good")
    (good,) = _batch(env, data_dir, [FLOOD_QUESTION])
    assert good["written_by"] == "fake-model"
    assert_sound(good)
    (plain,) = _batch({}, data_dir, [FLOOD_QUESTION])
    assert (plain["written_by"], plain["writer_fallback"]) == (None, "not configured")


@pytest.mark.slow
def test_a_real_llama_server_gives_sound_answers_to_four_questions(
    embedder: Embedder,
    tmp_path: Path,
    article_paths: dict[str, Path],
    llama_server: LlamaServer,
) -> None:
    data_dir = _added(tmp_path, article_paths, "forest", "flood")
    env = {
        "ARTICLEBOT_LLM_BASE_URL": llama_server.base_url,
        "ARTICLEBOT_LLM_MODEL": llama_server.model,
        "ARTICLEBOT_LLM_TIMEOUT_S": "60",
    }
    # Four of the eight, two an article: each is a real generation (about 5 s on two cores).
    asked = QUESTIONS[::2]
    answers = _batch(env, data_dir, asked)
    assert [a["question"] for a in answers] == asked
    for answer in answers:
        assert_sound(answer)
        print(answer["question"], "->", answer["written_by"] or answer["writer_fallback"])
    # The model is far too small to answer well: what it writes is mostly caught, and said so.
    assert all(a["written_by"] == llama_server.model or a["writer_fallback"] for a in answers)


def summary_json(
    library: Library, capsys: pytest.CaptureFixture[str], *argv: str
) -> dict[str, Any]:
    assert main(["summary", *argv, "--json"], library=library) == 0
    return json.loads(capsys.readouterr().out)


def test_a_summary_is_written_by_the_writer_and_checked_or_kept_with_the_reason(
    make_library: Callable[..., Library],
    articles: Callable[[Library], None],
    fake_writer: FakeWriterServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`summary` words an article's summary as `ask` words an answer: asked in the article's
    language, each sentence checked against the passages it cites, shown with `(¶n)` for its
    sources; else the article's own sentences, with why."""
    quiet = make_library()
    articles(quiet)
    own = summary_json(quiet, capsys, "1")
    assert "written_by" not in own and "writer_fallback" not in own  # as it always was
    assert own["summary"] == quiet.collection().summary(1).text

    library = make_library(writer=WriterSettings(fake_writer.url("good"), "fake-model"))
    articles(library)
    asked = len(fake_writer.requests)
    written = summary_json(library, capsys, "1")
    ((_, _, request),) = fake_writer.requests[asked:]
    assert translate("en-US", SUMMARY_QUESTION) in request["messages"][-1]["content"]
    assert written["written_by"] == "fake-model" and written["writer_fallback"] is None
    assert re.search(r"\(¶\d+\)", written["summary"]) and "[1]" not in written["summary"]
    assert written["sentences"] == own["sentences"]  # the article's own, for checking
    assert main(["summary", "1"], library=library) == 0
    assert "Written by fake-model, from the article's sentences:" in capsys.readouterr().out
    off = summary_json(library, capsys, "1", "--no-writer")
    assert off["writer_fallback"] == "turned off (--no-writer)" and off["summary"] == own["summary"]

    bad = make_library(writer=WriterSettings(fake_writer.url("fabricated-quote"), "fake-model"))
    articles(bad)
    kept = summary_json(bad, capsys, "1")
    assert kept["written_by"] is None and SCENARIOS["fabricated-quote"] in kept["writer_fallback"]
    assert kept["summary"] == own["summary"]
