"""`/settings` through SimCord: where mentions are answered, who may add, the feed channel."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from bot_world import Server, last_said
from news_site import Site

from bot import create_bot
from bot.client import ArticleBot
from index import Library

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

FERRY = (
    "The harbor authority approved a new ferry terminal on Tuesday.\n\n"
    "The ferry terminal will cost 80 million dollars and open in 2027."
)


@pytest.fixture
def site() -> Iterator[Site]:
    with Site.serving() as news:
        yield news


async def test_with_mentions_limited_to_one_channel_a_mention_elsewhere_gets_no_answer(
    server: Server, simcord_bot: ArticleBot, bot_library: Library
) -> None:
    server.add_text(FERRY, title="Harbor gets a ferry terminal")
    questions = server.guild.create_text_channel("questions")
    chosen = await server.admin.slash(server.channel, "settings mentions", channel=questions)
    assert chosen.response is not None and chosen.response.ephemeral
    assert f"answered in: <#{questions.id}>" in (chosen.response.embeds[0].description or "")
    # The choice is kept in the data folder, not in the running bot.
    await server.env.restart_bot(create_bot(replace(simcord_bot.settings), library=bot_library))
    me = server.guild.me
    assert me is not None

    await server.member.send(server.channel, f"{me.mention} how much will the ferry cost?")
    said = last_said(server.channel)
    assert said is not None and not said.author.bot  # no answer, no notice

    await server.member.send(questions, f"{me.mention} how much will the ferry cost?")
    answer = last_said(questions)
    assert answer is not None and answer.author.bot
    assert "80 million dollars" in (answer.embeds[0].description or "")

    # /ask is a deliberate request: it works in every channel.
    asked = await server.member.slash(server.channel, "ask", question="What will the ferry cost?")
    assert asked.response is not None and "80 million" in (
        asked.response.embeds[0].description or ""
    )

    everywhere = await server.admin.slash(server.channel, "settings mentions")
    assert everywhere.response is not None
    assert "answered in: every channel" in (everywhere.response.embeds[0].description or "")


async def test_settings_are_for_admins(server: Server) -> None:
    assert not any(
        c.startswith("settings") for c in server.member.available_commands(server.channel)
    )
    assert "settings show" in server.admin.available_commands(server.channel)


async def test_an_editor_role_chosen_in_settings_decides_who_may_add(server: Server) -> None:
    editors = server.guild.create_role("Editors")
    chosen = await server.admin.slash(server.channel, "settings editor-role", role=editors)
    assert chosen.response is not None
    assert "the Editors role and admins" in (chosen.response.embeds[0].description or "")
    refused = await server.member.slash(server.channel, "add", file=("a.txt", b"A note."))
    assert refused.response is not None and refused.response.ephemeral
    assert refused.response.content.startswith("Only members with the Editors role")
    assert len(server.env.errors) == 1
    helped = await server.member.slash(server.channel, "help")
    assert helped.response is not None
    assert "Editors" in (helped.response.embeds[0].description or "")


async def test_new_feed_articles_are_announced_in_the_chosen_channel(
    server: Server, site: Site, simcord_bot: ArticleBot
) -> None:
    news = server.guild.create_text_channel("news")
    await server.admin.slash(server.channel, "settings feed-channel", channel=news)
    await server.admin.slash(server.channel, "feed add", url=f"{site.base}/feed.xml")
    cog = simcord_bot.get_cog("Feeds")
    assert cog is not None
    assert await cog.poll_once() == 2
    announced = last_said(news)
    assert announced is not None and announced.author.bot
    assert announced.content.startswith("New from the feeds this server follows (2):")
    assert "ferry" in announced.content.lower()
