"""Help and welcome in SimCord: /help, "@bot help", a new server's greeting, replies that are
not questions."""

from __future__ import annotations

import discord
import pytest
import simcord
from bot_world import Server, last_said

from bot.client import ArticleBot

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

FERRY = (
    "The harbor authority approved a new ferry terminal on Tuesday.\n\n"
    "The ferry terminal will cost 80 million dollars and open in 2027."
)


async def test_help_tells_a_member_how_to_ask_and_add_privately(server: Server) -> None:
    result = await server.member.slash(server.channel, "help")
    assert result.response is not None and result.response.ephemeral
    text = result.response.embeds[0].description or ""
    assert "/ask" in text and "/add url:" in text
    assert "/rebuild" not in text  # not an admin


async def test_help_tells_an_admin_about_the_admin_commands(server: Server) -> None:
    result = await server.admin.slash(server.channel, "help")
    assert result.response is not None
    assert "/rebuild" in (result.response.embeds[0].description or "")


@pytest.mark.bot_settings(editor_role="Editors")
async def test_help_says_who_may_add_when_a_role_is_required(server: Server) -> None:
    result = await server.member.slash(server.channel, "help")
    assert result.response is not None
    text = result.response.embeds[0].description or ""
    assert "/add url:" not in text and "Editors" in text


@pytest.mark.parametrize("words", ["help", "what can you do?", "Help!"])
async def test_mentioning_the_bot_for_help_gets_the_guide_not_an_answer(
    server: Server, words: str
) -> None:
    server.add_text(FERRY, title="Harbor gets a ferry terminal")
    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, f"{me.mention} {words}")
    reply = last_said(server.channel)
    assert reply is not None and reply.author.id == me.id
    (embed,) = reply.embeds
    assert "/ask" in (embed.description or "")
    assert "ferry" not in (embed.description or "")


async def test_thanks_under_an_answer_gets_no_reply_but_a_question_does(server: Server) -> None:
    server.add_text(FERRY, title="Harbor gets a ferry terminal")
    first = await server.member.slash(
        server.channel, "ask", question="What did the harbor authority approve?"
    )
    assert first.response is not None
    await server.member.send(server.channel, "thanks!", reply_to=first.response)
    await server.admin.send(server.channel, "nice, thanks for this", reply_to=first.response)
    said = last_said(server.channel)
    assert said is not None and not said.author.bot
    await server.member.send(server.channel, "how much will it cost?", reply_to=first.response)
    reply = last_said(server.channel)
    assert reply is not None and reply.author.bot
    assert "80 million dollars" in (reply.embeds[0].description or "")


async def test_a_new_server_is_greeted_once_in_a_channel_the_bot_may_write_in(
    simcord_env: simcord.Env, simcord_bot: ArticleBot
) -> None:
    guild = simcord_env.create_guild("Fresh")
    channel = guild.create_text_channel("general")
    joined = simcord_bot.get_guild(guild.id)
    assert isinstance(joined, discord.Guild)
    # discord.py fires on_guild_join only for a server that newly added the bot; SimCord
    # announces every server as a known one, so the event is dispatched as Discord would.
    simcord_bot.dispatch("guild_join", joined)
    await simcord_env.settle()
    greeting = channel.last_message
    assert greeting is not None and greeting.author.bot
    (embed,) = greeting.embeds
    assert embed.title == "Thanks for adding articlebot"
    assert "/add" in (embed.description or "") and "/ask" in (embed.description or "")
