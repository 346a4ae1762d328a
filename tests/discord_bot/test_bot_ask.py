"""Asking, through SimCord: /ask, mentions, follow-up replies, limits, pings, isolation."""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

import discord
import pytest
import simcord
from bot_world import Server, callback_types, last_said, make_server

from bot.errors import GENERIC, GUILD_ONLY
from bot.render import EMBED_DESCRIPTION, EMBED_TITLE, EMBED_TOTAL

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

FACT_QUESTION = "Who is meeting with New York City Mayor Eric Adams?"
PINGS = re.compile(r"@(everyone|here)|<@[!&]?\d+>")


def embed_text(embed: discord.Embed) -> str:
    return f"{embed.title}\n{embed.description}\n{embed.footer.text or ''}"


def assert_no_pings(message: discord.Message) -> None:
    assert not message.mention_everyone
    assert not message.mentions
    assert not message.role_mentions


async def add_sample(server: Server, attachment: tuple[str, bytes]) -> None:
    result = await server.admin.slash(server.channel, "add", file=attachment)
    assert result.response is not None
    assert result.response.content.startswith("Added **Border czar Tom Homan")


async def test_admin_adds_sample_as_attachment_and_member_gets_cited_answer(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await add_sample(server, sample_attachment)

    result = await server.member.slash(server.channel, "ask", question=FACT_QUESTION)

    assert callback_types(server.env)[-1] == 5  # acknowledged at once, answered after the work
    response = result.response
    assert response is not None and not response.ephemeral
    (embed,) = response.embeds
    text = embed.description or ""
    assert "Tom Homan" in text and "[1]" in text
    assert "**[1]** Border czar Tom Homan meets with blue city leader" in text
    assert re.search(r"¶\d+", text)


async def test_ask_runs_the_core_in_a_worker_thread(
    server: Server, sample_attachment: tuple[str, bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    await add_sample(server, sample_attachment)
    threads: list[threading.Thread] = []
    collection = server.collection
    original = collection.ask

    def recording_ask(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread())
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(collection, "ask", recording_ask)
    await server.member.slash(server.channel, "ask", question=FACT_QUESTION)
    assert threads and threads[0] is not threading.main_thread()
    assert not threads[0].name.startswith("articlebot-add")  # never behind the adds


async def test_mention_gets_a_cited_reply(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await add_sample(server, sample_attachment)
    me = server.guild.me
    assert me is not None

    question = await server.member.send(server.channel, f"{me.mention} {FACT_QUESTION}")

    reply = last_said(server.channel)
    assert reply is not None and reply.author.id == me.id
    assert reply.reference is not None and reply.reference.message_id == question.id
    (embed,) = reply.embeds
    assert "Tom Homan" in (embed.description or "") and "[1]" in (embed.description or "")
    assert embed.title == FACT_QUESTION
    assert_no_pings(reply)


async def test_mention_without_a_question_explains_how_to_ask(server: Server) -> None:
    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, me.mention)
    reply = last_said(server.channel)
    assert reply is not None and "Ask me something after the mention" in reply.content


async def test_messages_that_do_not_mention_the_bot_are_ignored(server: Server) -> None:
    said = await server.member.send(server.channel, "what did the mayor say?")
    await server.admin.send(server.channel, "no idea", reply_to=said)
    assert [m.author.id for m in server.channel.history()] == [server.member.id, server.admin.id]


async def test_reply_to_an_answer_is_a_follow_up_about_the_same_articles(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await add_sample(server, sample_attachment)
    server.add_text(
        "The harbor authority approved a new ferry terminal on Tuesday.\n\n"
        "The ferry terminal will cost 80 million dollars and open in 2027.",
        title="Harbor gets a ferry terminal",
    )
    first = await server.member.slash(server.channel, "ask", question=FACT_QUESTION)
    assert first.response is not None

    # No mention: a reply to one of the bot's answers is enough.
    await server.member.send(
        server.channel, "How much will the ferry terminal cost?", reply_to=first.response
    )

    reply = last_said(server.channel)
    assert reply is not None and reply.reference is not None
    assert reply.reference.message_id != first.response.id or reply.author.bot
    text = reply.embeds[0].description or ""
    # Scoped to the first answer's article: the ferry article is never cited.
    assert "Harbor gets a ferry terminal" not in text
    assert "Border czar Tom Homan" in text


async def test_article_option_autocompletes_titles_and_limits_the_question(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await add_sample(server, sample_attachment)
    ferry = server.add_text(
        "The ferry terminal will cost 80 million dollars and open in 2027.", title="Harbor ferry"
    )

    offered = await server.member.autocomplete(server.channel, "ask", "article", "harb")
    assert offered == [{"name": "Harbor ferry", "value": str(ferry)}]

    result = await server.member.slash(
        server.channel, "ask", question=FACT_QUESTION, article=str(ferry)
    )
    assert result.response is not None
    text = result.response.embeds[0].description or ""
    assert "Border czar" not in text and "Harbor ferry" in text


async def test_nothing_relevant_says_so_and_shows_closest_passages(
    server: Server, sample_attachment: tuple[str, bytes]
) -> None:
    await add_sample(server, sample_attachment)
    result = await server.member.slash(
        server.channel, "ask", question="What is the airspeed velocity of an unladen swallow?"
    )
    assert result.response is not None
    text = result.response.embeds[0].description or ""
    assert text.startswith("I could not find an answer")
    assert "\n> " in text and "**[1]**" in text


async def test_article_full_of_mentions_pings_no_one(server: Server) -> None:
    role = server.guild.create_role("Subscribers")
    loud = (
        f"@everyone @here <@{server.member.id}> <@!{server.admin.id}> <@&{role.id}> "
        "The lighthouse keeper retired after forty years of service on the rock."
    )
    shown = await server.admin.slash(server.channel, "add")
    added = await server.admin.submit_modal(
        shown, {"title": f"@everyone lighthouse news <@&{role.id}>", "text": loud}
    )
    assert added.response is not None
    assert_no_pings(added.response.message)
    assert not PINGS.search(added.response.content)

    asked = await server.member.slash(
        server.channel, "ask", question="How long did the lighthouse keeper serve?"
    )
    assert asked.response is not None
    message = asked.response.message
    assert_no_pings(message)
    assert "forty years" in embed_text(message.embeds[0])
    assert not PINGS.search(embed_text(message.embeds[0]))

    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, f"{me.mention} who retired from the lighthouse?")
    reply = last_said(server.channel)
    assert reply is not None and reply.embeds
    assert_no_pings(reply)
    assert not PINGS.search(embed_text(reply.embeds[0]))


async def test_huge_one_paragraph_article_still_answers_within_limits(server: Server) -> None:
    filler = " ".join(
        f"Item {i} of the harbor ledger records routine maintenance on pier {i % 17}."
        for i in range(60)
    )
    # One sentence longer than a whole embed, holding the fact: the answer must be cut to fit.
    run_on = " and ".join(f"crate {i} went to warehouse {i % 9}" for i in range(200))
    paragraph = (
        f"{filler} The dredging contract was awarded to Blue Whale Marine for 42 million "
        f"dollars and {run_on}. {filler}"
    )
    assert len(paragraph) > 10_000
    body = ("Harbor ledger\n\n" + paragraph).encode()
    added = await server.admin.slash(server.channel, "add", file=("ledger.txt", body))
    assert added.response is not None and "1 paragraph indexed" in added.response.content

    result = await server.member.slash(
        server.channel, "ask", question="Who was awarded the dredging contract?"
    )

    assert result.response is not None
    (embed,) = result.response.embeds
    assert len(embed.title or "") <= EMBED_TITLE
    assert len(embed.description or "") <= EMBED_DESCRIPTION
    assert len(embed) <= EMBED_TOTAL
    assert "Blue Whale Marine" in (embed.description or "") and "[1]" in (embed.description or "")


async def test_second_server_cannot_see_the_first_servers_articles(
    server: Server,
    sample_attachment: tuple[str, bytes],
    simcord_env: simcord.Env,
) -> None:
    await add_sample(server, sample_attachment)
    other = make_server(simcord_env, server.library, "Elsewhere")

    result = await other.member.slash(other.channel, "ask", question=FACT_QUESTION)
    assert result.response is not None
    text = result.response.embeds[0].description or ""
    assert "Tom Homan" not in text and "no articles" in text.lower()

    assert await other.member.autocomplete(other.channel, "ask", "article", "") == []
    listed = await other.member.slash(other.channel, "articles")
    assert listed.response is not None
    assert "No articles yet" in (listed.response.embeds[0].description or "")
    removed = await other.admin.slash(other.channel, "remove", article="1")
    assert removed.response is not None and removed.response.ephemeral
    assert "No article in this server matches" in removed.response.content
    assert simcord_env.errors  # the refusal was handled (and acknowledged here)


async def test_ask_cooldown_per_member_on_the_virtual_clock(
    server: Server, sample_attachment: tuple[str, bytes], simcord_env: simcord.Env
) -> None:
    await add_sample(server, sample_attachment)
    for _ in range(3):
        ok = await server.member.slash(server.channel, "ask", question=FACT_QUESTION)
        assert ok.response is not None and ok.response.embeds

    refused = await server.member.slash(server.channel, "ask", question=FACT_QUESTION)
    assert refused.response is not None and refused.response.ephemeral
    assert re.fullmatch(r"Slow down a little: try again in \d+ s\.", refused.response.content)
    assert len(simcord_env.errors) == 1

    # Another member has their own bucket.
    other = await server.admin.slash(server.channel, "ask", question=FACT_QUESTION)
    assert other.response is not None and other.response.embeds

    await simcord_env.advance_time(30)
    again = await server.member.slash(server.channel, "ask", question=FACT_QUESTION)
    assert again.response is not None and again.response.embeds


async def test_unexpected_failure_is_a_short_private_message_and_a_log_entry(
    server: Server,
    simcord_env: simcord.Env,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken_ask(*args: object, **kwargs: object) -> object:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(server.collection, "ask", broken_ask)
    with caplog.at_level(logging.ERROR, logger="bot"):
        result = await server.member.slash(server.channel, "ask", question="anything?")

    (message,) = result.followups
    assert message.ephemeral and message.content == GENERIC
    assert result.response is None  # the public "thinking…" placeholder was removed
    assert "disk on fire" not in message.content
    assert any("Error in ask" in r.message and r.exc_info for r in caplog.records)
    assert [type(e) for e in simcord_env.errors] == [discord.app_commands.CommandInvokeError]


async def test_refusal_after_defer_is_private_and_says_what_to_do(
    server: Server, simcord_env: simcord.Env
) -> None:
    result = await server.member.slash(
        server.channel, "ask", question="What happened?", article="no such article"
    )
    assert result.response is None  # the public placeholder was taken down
    (message,) = result.followups
    assert message.ephemeral
    assert message.content.startswith("No article in this server matches “no such article”")
    assert len(simcord_env.errors) == 1  # handled by the tree's one error handler


async def test_direct_messages_explain_that_the_bot_works_in_servers(
    simcord_env: simcord.Env,
) -> None:
    user = simcord_env.create_user("dm-user")
    await user.send_dm("hello, what can you do?")
    last = user.dm_channel.last_message
    assert last is not None and last.content == GUILD_ONLY
    assert "ask" not in user.available_commands()  # guild-only commands are not offered in DMs


async def test_direct_messages_are_answered_once_a_minute_not_every_time(
    simcord_env: simcord.Env,
) -> None:
    user = simcord_env.create_user("dm-spammer")
    for n in range(5):
        await user.send_dm(f"hello {n}")
    replies = [m for m in user.dm_channel.history() if m.author.bot]
    assert [m.content for m in replies] == [GUILD_ONLY]
    await simcord_env.advance_time(61)
    await user.send_dm("hello again")
    assert len([m for m in user.dm_channel.history() if m.author.bot]) == 2


async def test_slow_down_is_said_once_not_to_every_mention(server: Server) -> None:
    server.add_text("The ferry terminal will cost 80 million dollars.", title="Ferry")
    me = server.guild.me
    assert me is not None
    for _ in range(6):
        await server.member.send(server.channel, f"{me.mention} how much will the ferry cost?")
    texts = [m.content for m in server.channel.history() if m.author.bot]
    assert sum(t.startswith("Slow down") for t in texts) == 1
    said = [m for m in server.channel.history() if m.author.bot and not m.is_system()]
    assert len(said) == 4  # 3 answers, 1 notice


async def test_a_member_mentioned_in_a_question_is_no_raw_id_in_the_title_or_thread(
    server: Server,
) -> None:
    server.add_text(
        "The harbor authority approved a new ferry terminal on Tuesday. Its chair said the "
        "terminal would open in May and that ferries would leave every half hour.",
        title="Harbor ferry",
    )
    me = server.guild.me
    assert me is not None
    await server.member.send(
        server.channel,
        f"{me.mention} what did {server.admin.mention} say about the new ferry terminal?",
    )
    reply = last_said(server.channel)
    assert reply is not None and reply.author.bot
    assert reply.embeds[0].title == "what did @someone say about the new ferry terminal?"
    (thread,) = server.channel.threads
    assert thread.name == "what did @someone say about the new ferry terminal?"
    assert_no_pings(reply)


async def test_a_persian_quote_is_shown_as_the_article_writes_it(server: Server) -> None:
    article = Path(__file__).resolve().parents[1] / "data" / "scripts" / "persian-footballer.txt"
    attachment = (article.name, article.read_bytes())
    added = await server.admin.slash(server.channel, "add", file=attachment)
    assert added.response is not None and added.response.content.startswith("Added")

    question = "علی رضایی قرارداد خود را برای چند سال تمدید کرد؟"
    result = await server.member.slash(server.channel, "ask", question=question)

    assert result.response is not None
    (embed,) = result.response.embeds
    text = embed.description or ""
    # The non-joiner is the word's spelling: "حرفهای" would be another rendering.
    assert "بازیکن حرفه\u200cای" in text and "سه سال" in text and "[1]" in text
