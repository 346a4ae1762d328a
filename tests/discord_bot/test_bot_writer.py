"""Written answers in Discord, through SimCord, against the scripted fake server: the quoted
answer at once, the written one edited in once checked, its quotes one click away; a failed
check leaves the quotes and counts why; /settings writer turns it off for a server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bot_world import Server
from fake_writer import FakeWriterServer

from bot.client import ArticleBot
from bot.writing import QUOTES_FIELD
from index import Library, Limits
from index.messages import translate
from index.writer import SUMMARY_QUESTION, WriterSettings

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

FLOOD = Path(__file__).resolve().parents[1] / "data" / "flood-story.txt"
QUESTION = "How many residents of Marlow had to leave their homes?"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeWriterServer]:
    server = FakeWriterServer()
    yield server
    server.stop()


@pytest.fixture
def scenario() -> str:
    return "good"


@pytest.fixture
def bot_library(
    make_library: Callable[..., Library], fake: FakeWriterServer, scenario: str
) -> Library:
    writer = WriterSettings(fake.url(scenario), "fake-model", timeout_s=5)
    return make_library(limits=Limits(allow_private_networks=True), writer=writer)


def add_flood(server: Server) -> None:
    title, text = FLOOD.read_text(encoding="utf-8").split("\n\n", 1)
    server.add_text(text, title=title)


async def ask(server: Server, bot: ArticleBot) -> tuple[str, object]:
    result = await server.member.slash(server.channel, "ask", question=QUESTION)
    await bot.writing.settled()
    assert result.response is not None
    # The quoted answer went out first (the deferred response's first edit), whatever came after.
    sent = [
        e.json["embeds"][0]
        for e in server.env.http_requests
        if e.method == "PATCH" and e.json and e.json.get("embeds")
    ]
    assert "author" not in sent[0] and sent[0]["description"].startswith("> ")
    return sent[0]["description"], result.response.embeds[0]


def counted(bot: ArticleBot, outcome: str) -> float:
    return bot.telemetry.metrics.writer_answers.labels(outcome)._value.get()


async def test_the_written_answer_replaces_the_quoted_one_once_checked(
    server: Server, simcord_bot: ArticleBot
) -> None:
    add_flood(server)
    quoted, embed = await ask(server, simcord_bot)
    assert embed.author.name.startswith("Written by fake-model")
    assert not (embed.description or "").startswith(">") and "[1]" in embed.description
    assert "**Sources**" in embed.description and "**[1]** Marlow flood" in embed.description
    (field,) = embed.fields
    assert field.name == QUOTES_FIELD and field.value.startswith("||")
    assert counted(simcord_bot, "written") == 1


@pytest.mark.parametrize("scenario", ["fabricated-quote", "everyone"])
async def test_a_failed_check_leaves_the_quotes_and_is_counted(
    server: Server, simcord_bot: ArticleBot, scenario: str
) -> None:
    add_flood(server)
    quoted, embed = await ask(server, simcord_bot)
    assert embed.author.name is None and embed.description == quoted
    assert counted(simcord_bot, "quote" if scenario == "fabricated-quote" else "mention") == 1
    assert counted(simcord_bot, "written") == 0


async def test_a_server_that_turns_the_writer_off_gets_quotes_only(
    server: Server, simcord_bot: ArticleBot, fake: FakeWriterServer
) -> None:
    add_flood(server)
    chosen = await server.admin.slash(server.channel, "settings writer", on=False)
    assert chosen.response is not None
    assert "off (fake-model is configured)" in (chosen.response.embeds[0].description or "")
    before = len(fake.requests)
    _, embed = await ask(server, simcord_bot)
    assert embed.author.name is None and len(fake.requests) == before
    again = await server.admin.slash(server.channel, "settings writer", on=True)
    assert again.response is not None
    assert "on, by fake-model" in (again.response.embeds[0].description or "")


async def test_a_summary_is_written_in_the_model_s_words_once_each_sentence_checks_out(
    server: Server, simcord_bot: ArticleBot, fake: FakeWriterServer
) -> None:
    """/summary: the article's own sentences at once, then the writer's summary of them, asked
    in the article's language and checked as an answer is, its quotes one click away."""
    add_flood(server)
    asked = len(fake.requests)
    result = await server.member.slash(server.channel, "summary", article="Marlow")
    await simcord_bot.writing.settled()
    assert result.response is not None
    (embed,) = result.response.embeds
    assert embed.author.name.startswith("Written by fake-model")
    assert "[1]" in (embed.description or "") and "**Sources**" in (embed.description or "")
    ((_, _, request),) = fake.requests[asked:]
    asking = request["messages"][-1]["content"]
    assert translate("en-US", SUMMARY_QUESTION) in asking
    assert counted(simcord_bot, "written") == 1
