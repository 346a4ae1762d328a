"""Conversations through SimCord: an answer's thread, follow-ups that remember the earlier
question across a restart, and messages that are no question for the bot."""

from __future__ import annotations

from dataclasses import replace

import discord
import pytest
import simcord
from bot_world import Server, last_said
from test_conversations import LYON, WARSAW

from bot import create_bot
from bot.client import ArticleBot
from bot.render import FOLLOW_UP_HINT, IN_THREAD_HINT, THREAD_HINT
from index import Library

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]


def sources(message: discord.Message) -> str:
    return message.embeds[0].description or ""


async def restart(env: simcord.Env, bot: ArticleBot, library: Library) -> None:
    await env.restart_bot(create_bot(replace(bot.settings), library=library))


async def test_a_follow_up_in_the_answers_thread_after_a_restart_keeps_who_he_was(
    server: Server, simcord_bot: ArticleBot, bot_library: Library
) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    server.add_text(LYON, title="Lyon mayor at the climate summit")
    first = await server.member.slash(server.channel, "ask", question="Who visited Warsaw?")
    assert first.response is not None
    assert first.response.embeds[0].footer.text == THREAD_HINT
    (thread,) = server.channel.threads
    assert thread.name == "Who visited Warsaw?"

    await restart(server.env, simcord_bot, bot_library)
    # No mention: a question in the answer's thread is for the bot.
    await server.member.send(thread, "why did he go there?")

    answer = last_said(thread)
    assert answer is not None and answer.author.bot
    text = sources(answer)
    assert "energy agreement" in text  # "he" is Scholz, "there" Warsaw
    assert "Scholz in Poland" in text and "Lyon" not in text
    assert answer.embeds[0].footer.text == IN_THREAD_HINT


async def test_the_same_question_outside_the_conversation_is_not_about_warsaw(
    server: Server,
) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    server.add_text(LYON, title="Lyon mayor at the climate summit")
    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, f"{me.mention} why did he go there?")
    answer = last_said(server.channel)
    assert answer is not None and "Lyon mayor at the climate summit" in sources(answer)


async def test_thanks_in_an_answers_thread_gets_nothing(server: Server) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    await server.member.slash(server.channel, "ask", question="Who visited Warsaw?")
    (thread,) = server.channel.threads
    await server.member.send(thread, "thanks!")
    said = last_said(thread)
    assert said is not None and not said.author.bot


async def test_without_thread_permission_the_answer_invites_a_reply_instead(
    server: Server,
) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    me = server.guild.me
    assert me is not None
    quiet = server.guild.create_text_channel(
        "no-threads", overwrites={me: discord.PermissionOverwrite(create_public_threads=False)}
    )
    first = await server.member.slash(quiet, "ask", question="Who visited Warsaw?")
    assert first.response is not None and not quiet.threads
    assert first.response.embeds[0].footer.text == FOLLOW_UP_HINT
    await server.member.send(quiet, "why did he go there?", reply_to=first.response)
    answer = last_said(quiet)
    assert answer is not None and answer.author.bot and "energy agreement" in sources(answer)


async def test_with_threads_turned_off_answers_open_none(server: Server) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    changed = await server.admin.slash(server.channel, "settings threads", on=False)
    assert changed.response is not None and changed.response.ephemeral
    assert "**Answer threads**: off" in (changed.response.embeds[0].description or "")
    first = await server.member.slash(server.channel, "ask", question="Who visited Warsaw?")
    assert first.response is not None and not server.channel.threads


async def test_a_question_replying_to_a_bot_message_that_is_no_answer_gets_nothing(
    server: Server,
) -> None:
    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, me.mention)  # the bot explains how to ask
    how_to = last_said(server.channel)
    assert how_to is not None and how_to.author.bot
    await server.member.send(server.channel, "what did the mayor say?", reply_to=how_to)
    said = last_said(server.channel)
    assert said is not None and not said.author.bot


async def test_a_follow_up_after_its_article_was_removed_asks_the_others(server: Server) -> None:
    warsaw = server.add_text(WARSAW, title="Scholz in Poland")
    server.add_text(LYON, title="Lyon mayor at the climate summit")
    await server.member.slash(server.channel, "ask", question="Who visited Warsaw?")
    (thread,) = server.channel.threads
    server.collection.remove(warsaw)
    await server.member.send(thread, "why did the mayor of Lyon go to Paris?")
    answer = last_said(thread)
    assert answer is not None and answer.author.bot
    assert "climate summit" in sources(answer)
    assert "no articles" not in sources(answer)


async def test_ask_in_an_answers_thread_carries_on_its_conversation(server: Server) -> None:
    server.add_text(WARSAW, title="Scholz in Poland")
    server.add_text(LYON, title="Lyon mayor at the climate summit")
    await server.member.slash(server.channel, "ask", question="Who visited Warsaw?")
    (thread,) = server.channel.threads
    asked = await server.admin.slash(thread, "ask", question="why did he go there?")
    assert asked.response is not None
    assert "energy agreement" in (asked.response.embeds[0].description or "")
    assert asked.response.embeds[0].footer.text == IN_THREAD_HINT
    assert len(server.channel.threads) == 1  # no thread inside the thread
