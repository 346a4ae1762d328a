"""What articles are about, through SimCord: /summary, "tl;dr?" after an /add in the same
channel, an overview question in an answer's thread, /digest, and a feed's announcement."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import discord
import pytest
from bot_world import Server, last_said
from news_site import Site
from test_conversations import LYON, WARSAW

from bot import create_bot
from bot.client import ArticleBot
from bot.render import THREAD_HINT
from index import Library

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

DEMO = Path(__file__).resolve().parents[2] / "index" / "demo" / "tool-library.md"


def text_of(message: discord.Message) -> str:
    embed = message.embeds[0]
    return f"{embed.title}\n{embed.description}\n{embed.footer.text or ''}"


@pytest.fixture
def site() -> Iterator[Site]:
    with Site.serving() as news:
        yield news


def _first_sentence(server: Server, article: int) -> str:
    return server.collection.summary(article).sentences[0].text


async def test_summary_quotes_the_article_with_its_paragraphs_and_opens_a_thread(
    server: Server,
) -> None:
    demo = server.add_text(DEMO.read_text(encoding="utf-8"), title="Tool library")
    server.add_text(WARSAW, title="Scholz in Poland")
    result = await server.member.slash(server.channel, "summary", article="Tool library")
    assert result.response is not None
    shown = text_of(result.response)
    assert _first_sentence(server, demo) in shown
    first = server.collection.summary(demo).sentences[0].paragraph
    assert "[1]" in shown and f"¶{first}" in shown and "Scholz" not in shown
    assert result.response.embeds[0].footer.text == THREAD_HINT
    assert [c["label"] for c in result.response.components[0]["components"]] == [
        "Helpful",
        "Not helpful",
    ]
    (thread,) = server.channel.threads
    # A follow-up there asks the article it summarised.
    await server.member.send(thread, "Where is the library?")
    answer = last_said(thread)
    assert answer is not None and answer.author.bot
    assert "Quarry Street" in text_of(answer)


async def test_tldr_after_an_add_in_the_channel_is_about_that_article(
    server: Server,
) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    server.add_text(LYON, title="Lyon mayor at the climate summit")
    added = await server.member.slash(
        server.channel, "add", file=("tool-library.md", DEMO.read_bytes())
    )
    assert added.response is not None and added.response.content.startswith("Added")
    demo = max(a.id for a in server.collection.articles())
    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, f"{me.mention} tl;dr?")
    answer = last_said(server.channel)
    assert answer is not None and answer.author.bot
    assert _first_sentence(server, demo) in text_of(answer)
    assert "Scholz" not in text_of(answer) and "Lyon" not in text_of(answer)
    # Long after the add, the same words no longer mean that article: which one is asked.
    await server.env.advance_time(3600)
    await server.member.send(server.channel, f"{me.mention} tl;dr?")
    later = last_said(server.channel)
    assert later is not None and "Several articles could be meant" in text_of(later)


async def test_an_overview_question_in_an_answers_thread_is_about_its_article(
    server: Server,
) -> None:
    warsaw = server.add_text(WARSAW, title="Scholz in Poland")
    server.add_text(LYON, title="Lyon mayor at the climate summit")
    await server.member.slash(server.channel, "ask", question="Who visited Warsaw?")
    (thread,) = server.channel.threads
    await server.member.send(thread, "De quoi parle cet article")  # no question mark
    answer = last_said(thread)
    assert answer is not None and answer.author.bot
    assert _first_sentence(server, warsaw) in text_of(answer)


async def test_digest_lists_the_days_articles_with_their_first_lines(server: Server) -> None:
    demo = server.add_text(DEMO.read_text(encoding="utf-8"), title="Tool library")
    server.add_text(WARSAW, title="Scholz in Poland")
    result = await server.member.slash(server.channel, "digest", days=1)
    assert result.response is not None
    shown = text_of(result.response)
    assert "Tool library" in shown and "Scholz in Poland" in shown
    assert shown.index("Scholz in Poland") < shown.index("Tool library")  # newest first
    assert _first_sentence(server, demo)[:80] in shown


async def test_a_feeds_new_articles_are_announced_with_their_summaries(
    server: Server, site: Site, simcord_bot: ArticleBot
) -> None:
    news = server.guild.create_text_channel("news")
    await server.admin.slash(server.channel, "settings feed-channel", channel=news)
    await server.admin.slash(server.channel, "feed add", url=f"{site.base}/feed.xml")
    cog = simcord_bot.get_cog("Feeds")
    assert cog is not None
    assert await cog.poll_once() == 2
    announced = last_said(news)
    assert announced is not None
    for article in server.collection.articles():
        line = server.collection.summary(article.id).line
        assert "> " + line[:100] in announced.content


async def test_the_scheduled_digest_is_posted_once_a_period_even_after_a_restart(
    server: Server, simcord_bot: ArticleBot, bot_library: Library
) -> None:
    news = server.guild.create_text_channel("news")
    chosen = await server.admin.slash(
        server.channel, "settings digest", every="daily", channel=news
    )
    assert chosen.response is not None
    assert f"daily in <#{news.id}>" in (chosen.response.embeds[0].description or "")
    server.add_text(DEMO.read_text(encoding="utf-8"), title="Tool library")
    cog = simcord_bot.get_cog("Summaries")
    assert cog is not None
    # Noon of the day it was chosen: two hours after noon tomorrow is still tomorrow, at
    # whatever time of day the test runs.
    today = datetime.now(UTC).replace(hour=12, minute=0, second=0, microsecond=0)
    assert await cog.post_digests(today) == 0  # the day it was chosen counts as posted
    tomorrow = today + timedelta(days=1)
    assert await cog.post_digests(tomorrow) == 1
    posted = last_said(news)
    assert posted is not None and "Tool library" in text_of(posted)
    assert await cog.post_digests(tomorrow) == 0
    await server.env.restart_bot(create_bot(replace(simcord_bot.settings), library=bot_library))
    restarted = server.env.bot.get_cog("Summaries")
    assert restarted is not None
    assert await restarted.post_digests(tomorrow + timedelta(hours=2)) == 0
    assert len([m for m in news.history() if m.author.bot]) == 1
    off = await server.admin.slash(server.channel, "settings digest", every="off")
    assert off.response is not None and "**Digest** of new articles: off" in (
        off.response.embeds[0].description or ""
    )
    assert await restarted.post_digests(tomorrow + timedelta(days=1)) == 0
