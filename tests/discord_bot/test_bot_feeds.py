"""Following feeds and refreshing articles in SimCord, against a real news site on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import simcord
from bot_world import Server
from news_site import STORIES, Site

from bot.client import ArticleBot

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]


@pytest.fixture
def site() -> Iterator[Site]:
    with Site.serving() as news:
        yield news


async def test_an_admin_follows_a_feed_whose_news_is_then_answered(
    server: Server, site: Site, simcord_bot: ArticleBot
) -> None:
    followed = await server.admin.slash(server.channel, "feed add", url=f"{site.base}/feed.xml")
    assert followed.response is not None and followed.response.ephemeral
    assert "Now following **Millbrook Weekly**" in followed.response.content
    listed = await server.admin.slash(server.channel, "feed list")
    assert listed.response is not None and "Millbrook Weekly" in listed.response.content

    cog = simcord_bot.get_cog("Feeds")
    assert cog is not None  # the extension's own class (load_extension imports it afresh)
    assert await cog.poll_once() == 2  # what the timer does every ARTICLEBOT_FEED_POLL_MINUTES
    assert await cog.poll_once() == 0
    # Each round is counted for /metrics, with the articles it brought.
    registry = simcord_bot.telemetry.metrics.registry
    assert registry.get_sample_value("articlebot_feed_polls_total", {"outcome": "ok"}) == 2
    assert registry.get_sample_value("articlebot_feed_articles_added_total") == 2
    asked = await server.member.slash(
        server.channel, "ask", question="How much will the ferry terminal cost?"
    )
    assert asked.response is not None
    assert "80 million dollars" in (asked.response.embeds[0].description or "")


async def test_feeds_are_for_admins(server: Server, site: Site) -> None:
    assert not any(c.startswith("feed") for c in server.member.available_commands(server.channel))
    assert any(c.startswith("feed") for c in server.admin.available_commands(server.channel))


async def test_refresh_says_whether_the_page_changed(
    server: Server, site: Site, simcord_env: simcord.Env, simcord_bot: ArticleBot
) -> None:
    added = await server.member.slash(server.channel, "add", url=f"{site.base}/bridge")
    assert added.response is not None and added.response.content.startswith("Added")
    title = STORIES["bridge"][0]
    same = await server.member.slash(server.channel, "refresh", article=title)
    assert same.response is not None and "has not changed" in same.response.content
    site.pages["bridge"] = site.pages["bridge"].replace(b"six weeks", b"eight weeks")
    changed = await server.member.slash(server.channel, "refresh", article=title)
    assert changed.response is not None and changed.response.content.startswith("Updated")
    other = await server.admin.slash(server.channel, "refresh", article=title)
    assert other.response is not None and "has not changed" in other.response.content
    # Counted among the adds: one new version stored, two pages unchanged.
    registry = simcord_bot.telemetry.metrics.registry
    labels = {"reason": "", "source": "refresh"}
    assert registry.get_sample_value("articlebot_adds_total", {"outcome": "added", **labels}) == 1
    unchanged = {"outcome": "already_present", **labels}
    assert registry.get_sample_value("articlebot_adds_total", unchanged) == 2
