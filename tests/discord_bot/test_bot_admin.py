"""Listing, removing, rebuilding and statistics through SimCord, with their permissions."""

from __future__ import annotations

import re
import time

import pytest
import simcord
from bot_world import Server, edits, make_server

from bot.client import ArticleBot
from index import Library, Progress, RebuildResult

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

ADMIN_ONLY = ("rebuild", "stats")


async def test_admin_commands_are_hidden_from_a_plain_member(server: Server) -> None:
    visible = server.member.available_commands(server.channel)
    assert set(visible) == {
        "add",
        "articles",
        "ask",
        "digest",
        "help",
        "refresh",
        "remove",
        "summary",
    }
    assert set(ADMIN_ONLY) <= set(server.admin.available_commands(server.channel))
    for name in ADMIN_ONLY:
        with pytest.raises(simcord.SetupError, match="not visible"):
            await server.member.slash(server.channel, name)


async def test_admin_commands_are_also_checked_in_the_bot(
    server: Server, simcord_env: simcord.Env, simcord_bot: ArticleBot
) -> None:
    # A server can let anyone see /rebuild; the bot still requires Manage Server.
    commands = {c.name: c for c in await simcord_bot.tree.fetch_commands()}
    for name in ADMIN_ONLY:
        server.guild.set_command_permissions(commands[name], {server.member: True})
        result = await server.member.slash(server.channel, name)
        assert result.response is not None and result.response.ephemeral
        assert result.response.content == "You need the Manage Server permission to use this."
    assert len(simcord_env.errors) == len(ADMIN_ONLY)
    assert server.collection.stats().articles == 0


async def test_rebuild_works_for_an_admin_with_live_progress(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await server.admin.slash(server.channel, "add", file=sample_attachment)
    before = len(edits(server.env))

    result = await server.admin.slash(server.channel, "rebuild", reembed=True)

    assert result.response is not None and result.response.ephemeral
    assert re.fullmatch(
        r"Rebuilt this server's index: \d+ passages re-embedded and re-indexed in [\d.]+ s "
        r"\(\w+ index\)\.",
        result.response.content,
    )
    shown = edits(server.env)[before:]
    # One message edited as it goes: progress reports, then the result.
    assert shown[-1] == result.response.content
    progress = re.compile(r"(Re-embedding \d+ / \d+ passages \(\d+%\)|Indexing…)")
    assert all(progress.fullmatch(text) for text in shown[:-1])

    asked = await server.member.slash(
        server.channel, "ask", question="Who is meeting with New York City Mayor Eric Adams?"
    )
    assert asked.response is not None and "[1]" in (asked.response.embeds[0].description or "")


async def test_rebuild_edits_its_message_as_progress_is_reported(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The core's rebuild is replaced by one that waits until each report has been shown, so the
    # test sees every edit however fast the machine is.
    def shown(text: str) -> None:
        for _ in range(3_000):
            if text in edits(server.env):
                return
            time.sleep(0.01)
        raise AssertionError(f"never shown: {text}")

    def rebuild(*, reembed: bool, progress: Progress) -> RebuildResult:
        progress("Re-embedding", 1_204, 5_000)
        shown("Re-embedding 1,204 / 5,000 passages (24%)")
        progress("Re-embedding", 1_300, 5_000)  # too soon and too small a step: not shown
        progress("Indexing", 0, 1)
        shown("Indexing…")
        return RebuildResult(server.collection.name, 5_000, reembed, "flat", 1.0)

    monkeypatch.setattr(server.collection, "rebuild", rebuild)
    result = await server.admin.slash(server.channel, "rebuild", reembed=True)

    assert edits(server.env) == [
        "Re-embedding 1,204 / 5,000 passages (24%)",
        "Indexing…",
        "Rebuilt this server's index: 5,000 passages re-embedded and re-indexed in 1.0 s "
        "(flat index).",
    ]
    assert result.response is not None and result.response.content == edits(server.env)[-1]


async def test_rebuild_of_an_empty_server_says_there_is_nothing(server: Server) -> None:
    result = await server.admin.slash(server.channel, "rebuild")
    assert result.response is not None
    assert result.response.content == (
        "There is nothing to rebuild yet: this server has no articles."
    )


async def test_stats_shows_articles_passages_model_and_index(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await server.admin.slash(server.channel, "add", file=sample_attachment)
    result = await server.admin.slash(server.channel, "stats")
    assert result.response is not None and result.response.ephemeral
    fields = {f.name: f.value for f in result.response.embeds[0].fields}
    assert fields["Articles"] == "1"
    assert re.fullmatch(r"\d+ \(\d+ indexed\)", fields["Passages"] or "")
    assert (fields["Model"] or "") == server.library.embedder.name  # the default model
    assert re.fullmatch(r"\w+, [\d.,]+ (bytes|KB|MB|GB)", fields["Index"] or "")


async def test_articles_lists_newest_first_with_pages(
    server: Server, simcord_env: simcord.Env
) -> None:
    for n in range(1, 13):
        server.add_text(f"Council note {n} about the budget.", title=f"Note {n}", by=server.admin)

    result = await server.member.slash(server.channel, "articles")

    response = result.response
    assert response is not None and response.ephemeral
    first = response.embeds[0]
    lines = (first.description or "").splitlines()
    assert len(lines) == 10 and lines[0].startswith("`#12` **Note 12**")
    assert f"added by <@{server.admin.id}> <t:" in lines[0]
    assert first.footer.text == "Page 1 of 2 · 12 articles, newest first"

    await server.member.click(response, label="Next")
    second = result.response
    assert second is not None
    assert (second.embeds[0].description or "").splitlines()[-1].startswith("`#1` **Note 1**")
    assert not simcord_env.errors


async def test_member_removes_own_article_but_not_others(
    server: Server, simcord_env: simcord.Env
) -> None:
    mine = server.add_text("The member wrote this note.", title="Member note", by=server.member)
    theirs = server.add_text("The admin wrote this memo.", title="Admin memo", by=server.admin)

    offered = await server.member.autocomplete(server.channel, "remove", "article", "")
    assert [c["value"] for c in offered] == [str(mine)]  # only what they could remove

    refused = await server.member.slash(server.channel, "remove", article=str(theirs))
    assert refused.response is not None and refused.response.ephemeral
    assert refused.response.content.startswith("Only the member who added that article")
    assert len(simcord_env.errors) == 1

    asked = await server.member.slash(server.channel, "remove", article="Member note")
    assert asked.response is not None and asked.response.ephemeral
    assert asked.response.content.startswith(f"Remove **Member note** (#{mine})?")
    assert len(server.collection.articles()) == 2  # nothing gone before the confirmation
    await server.member.click(asked.response, label="Remove")
    assert asked.response.content == (
        f"Removed **Member note** (#{mine}); questions no longer use it."
    )
    assert [a.id for a in server.collection.articles()] == [theirs]


async def test_keep_or_no_confirmation_removes_nothing(server: Server) -> None:
    server.add_text("A note.", title="Member note", by=server.member)
    asked = await server.member.slash(server.channel, "remove", article="Member note")
    assert asked.response is not None
    await server.member.click(asked.response, label="Keep")
    assert asked.response.content == "Kept **Member note** (#1)."
    unanswered = await server.member.slash(server.channel, "remove", article="Member note")
    await server.env.advance_time(3 * 60)
    assert unanswered.response is not None
    assert unanswered.response.content == "Kept **Member note**: the removal was not confirmed."
    assert [a.title for a in server.collection.articles()] == ["Member note"]


async def test_admin_removes_any_article(server: Server) -> None:
    theirs = server.add_text("A member's note.", title="Member note", by=server.member)
    offered = await server.admin.autocomplete(server.channel, "remove", "article", "memb")
    assert [c["value"] for c in offered] == [str(theirs)]
    asked = await server.admin.slash(server.channel, "remove", article=str(theirs))
    assert asked.response is not None
    await server.admin.click(asked.response, label="Remove")
    assert asked.response.content.startswith("Removed")
    assert server.collection.articles() == []


async def test_each_server_numbers_its_own_articles_from_one(
    simcord_env: simcord.Env, bot_library: Library
) -> None:
    first = make_server(simcord_env, bot_library, "First")
    second = make_server(simcord_env, bot_library, "Second")
    for n in range(3):
        first.add_text(f"Note {n} of the first server.", title=f"First {n}")
    added = await second.member.slash(second.channel, "add", file=("a.txt", b"Only one here."))
    assert added.response is not None and "(#1)" in added.response.content  # not #4
    listed = await second.member.slash(second.channel, "articles")
    assert listed.response is not None
    assert "`#1`" in (listed.response.embeds[0].description or "")
    removed = await second.member.slash(second.channel, "remove", article="#1")
    assert removed.response is not None and "(#1)" in removed.response.content
    await second.member.click(removed.response, label="Remove")
    assert second.collection.articles() == []
    assert len(first.collection.articles()) == 3  # the other server's #1 is untouched
