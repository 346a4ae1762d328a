"""Feedback through SimCord: the buttons under an answer, one vote per member, /stats."""

from __future__ import annotations

from dataclasses import replace

import pytest
from bot_world import Server

from bot import create_bot
from bot.client import ArticleBot
from index import Library
from index.storage.conversations import Conversations

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

FERRY = (
    "The harbor authority approved a new ferry terminal on Tuesday.\n\n"
    "The ferry terminal will cost 80 million dollars and open in 2027."
)


async def feedback_line(server: Server) -> str:
    stats = await server.admin.slash(server.channel, "stats")
    assert stats.response is not None and stats.response.ephemeral
    (field,) = [f for f in stats.response.embeds[0].fields if f.name == "Feedback on answers"]
    return field.value or ""


async def test_not_helpful_counts_once_per_member_and_shows_in_stats(
    server: Server, simcord_bot: ArticleBot, bot_library: Library
) -> None:
    server.add_text(FERRY, title="Harbor gets a ferry terminal")
    asked = await server.member.slash(server.channel, "ask", question="What will the ferry cost?")
    answer = asked.response
    assert answer is not None

    first = await server.member.click(answer, label="Not helpful")
    assert first.response is not None and first.response.ephemeral
    assert first.response.content.startswith("Thanks: noted as not helpful")
    again = await server.member.click(answer, label="Not helpful")
    assert again.response is not None and again.response.ephemeral
    assert "already marked this answer as not helpful" in again.response.content
    assert await feedback_line(server) == (
        "👍 0 helpful · 👎 1 not helpful (`articlebot feedback --json` lists them)"
    )

    # The buttons still answer after a restart, and another member's vote counts too.
    await server.env.restart_bot(create_bot(replace(simcord_bot.settings), library=bot_library))
    other = await server.admin.click(answer, label="Helpful")
    assert other.response is not None and other.response.content.startswith("Thanks")
    changed = await server.member.click(answer, label="Helpful")
    assert changed.response is not None
    assert changed.response.content == "Changed your vote on this answer to helpful."
    assert (await feedback_line(server)).startswith("👍 2 helpful · 👎 0 not helpful")


async def test_a_vote_keeps_the_question_and_what_the_answer_quoted(
    server: Server, bot_library: Library
) -> None:
    server.add_text(FERRY, title="Harbor gets a ferry terminal")
    asked = await server.member.slash(server.channel, "ask", question="What will the ferry cost?")
    assert asked.response is not None
    await server.member.click(asked.response, label="Not helpful")
    (vote,) = Conversations.in_folder(bot_library.data_dir).votes()
    assert vote.collection == f"guild-{server.guild.id}" and not vote.helpful
    assert vote.question == "What will the ferry cost?"
    assert "80 million dollars" in vote.answer
    assert vote.citations[0]["title"] == "Harbor gets a ferry terminal"


async def test_answers_share_the_one_view_registered_at_start_up(
    server: Server, simcord_bot: ArticleBot
) -> None:
    server.add_text(FERRY, title="Harbor gets a ferry terminal")
    for question in ("What will the ferry cost?", "When will the terminal open?"):
        asked = await server.member.slash(server.channel, "ask", question=question)
        assert asked.response is not None
        assert [c["label"] for c in asked.response.components[0]["components"]] == [
            "Helpful",
            "Not helpful",
        ]
    # A bot answering for months must not hold a view for every answer it ever gave.
    assert len(simcord_bot.persistent_views) == 1
