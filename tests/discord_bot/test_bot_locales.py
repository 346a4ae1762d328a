"""The bot's own words in the member's language, through SimCord: a slash command's frame in
the member's Discord locale; a mention's in the question's language, else the server's
preferred locale; the quotes always the article's own.

SimCord sends every interaction as `en-US`; Discord sends the member's locale, so the tests
set it on the interaction payload SimCord builds (`member_locale`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import discord
import pytest
import simcord
import simcord.interactions
from bot_world import Server, last_said

from bot.answer_embed import ABSTAIN_HINT, FOLLOW_UP_HINT, SOURCES, THREAD_HINT
from index import Library
from index.answers.compose import ABSTAIN_TEXT
from index.messages import translate

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

TITLE = "Tool library opens in the old fire station"
ARTICLE = (
    "The town opened a tool library in the old fire station on Saturday. Any resident with a "
    "library card can borrow drills, ladders and sewing machines for a week at no cost.\n\n"
    "The town council approved 18,000 dollars in March to renovate the ground floor of the "
    "station. The money paid for new shelves, a workbench, lighting and a ramp at the entrance."
)


@pytest.fixture
def member_locale(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], None]:
    """Sets the locale every interaction from now on carries, as Discord sends a member's."""
    build = simcord.interactions.base_payload

    def as_member(locale: str) -> None:
        def payload(*args: Any, **kwargs: Any) -> Any:
            record, data = build(*args, **kwargs)
            data["locale"] = locale
            return record, data

        monkeypatch.setattr(simcord.interactions, "base_payload", payload)

    return as_member


def text_of(message: Any) -> str:
    """An answer's embed as a member reads it: its description (the settings', the answer's)."""
    return str(message.embeds[0].description or "")


def _footer(embed: Any) -> str:
    return embed.footer.text if embed.footer else ""


async def test_a_slash_command_answers_in_the_member_s_locale_with_the_article_s_quote(
    server: Server, member_locale: Callable[[str], None]
) -> None:
    server.add_text(ARTICLE, title=TITLE)
    member_locale("ja")
    result = await server.member.slash(
        server.channel, "ask", question="How much did the council approve for the renovation?"
    )
    assert result.response is not None
    (embed,) = result.response.embeds
    text = embed.description or ""
    assert "18,000 dollars" in text  # the article's words, as written
    assert f"**{translate('ja', SOURCES)}**" in text and "**Sources**" not in text
    assert _footer(embed) in {translate("ja", THREAD_HINT), translate("ja", FOLLOW_UP_HINT)}
    assert _footer(embed) and not _footer(embed).isascii()


async def test_a_decline_is_in_the_member_s_locale_whatever_the_question_s_language(
    server: Server, member_locale: Callable[[str], None]
) -> None:
    server.add_text(ARTICLE, title=TITLE)
    member_locale("pt-BR")
    result = await server.member.slash(
        server.channel, "ask", question="What is the capital of Australia?"
    )
    assert result.response is not None
    (embed,) = result.response.embeds
    text = embed.description or ""
    assert text.startswith(translate("pt-BR", ABSTAIN_TEXT))
    assert translate("pt-BR", ABSTAIN_HINT) in text
    assert ABSTAIN_TEXT not in text


async def test_a_mention_answers_in_the_question_s_language_else_the_server_s(
    simcord_env: simcord.Env, bot_library: Library
) -> None:
    server = make_server_with_locale(simcord_env, bot_library, "fr")
    server.add_text(ARTICLE, title=TITLE)
    me = server.guild.me
    assert me is not None
    await server.member.send(server.channel, f"{me.mention} Wie viel Geld hat der Rat bewilligt?")
    reply = last_said(server.channel)
    assert reply is not None
    (embed,) = reply.embeds
    assert f"**{translate('de', SOURCES)}**" in (embed.description or "")
    # Too short to tell its language: the server's preferred locale.
    await server.member.send(server.channel, f"{me.mention} ramp?")
    reply = last_said(server.channel)
    assert reply is not None
    (embed,) = reply.embeds
    text = embed.description or ""
    assert f"**{translate('fr', SOURCES)}**" in text or translate("fr", ABSTAIN_TEXT) in text


def make_server_with_locale(env: simcord.Env, library: Library, locale: str) -> Server:
    """bot_world.make_server's guild, with a preferred locale."""
    guild = env.create_guild("Rédaction", preferred_locale=locale)
    channel = guild.create_text_channel("general")
    admins = guild.create_role("Admins", permissions=discord.Permissions(manage_guild=True))
    admin = guild.add_member(env.create_user("redaction-admin"), roles=[admins])
    member = guild.add_member(env.create_user("redaction-member"))
    return Server(env, guild, channel, admin, member, library)


async def test_a_server_can_fix_the_language_of_the_bot_s_words(
    server: Server, member_locale: Callable[[str], None]
) -> None:
    server.add_text(ARTICLE, title=TITLE)
    offered = await server.admin.autocomplete(
        server.channel, "settings language", "language", "port"
    )
    assert [c["value"] for c in offered] == ["pt-BR"]
    typed = await server.admin.slash(server.channel, "settings language", language="klingon")
    assert typed.response is not None and "auto" in (typed.response.content or "")
    fixed = await server.admin.slash(server.channel, "settings language", language="fr")
    assert fixed.response is not None and "fr · `/settings language`" in text_of(fixed.response)
    member_locale("ja")
    asked = await server.member.slash(
        server.channel, "ask", question="What is the capital of Australia?"
    )
    assert asked.response is not None
    assert text_of(asked.response).startswith(translate("fr", ABSTAIN_TEXT))
    await server.admin.slash(server.channel, "settings language", language="auto")
    asked = await server.member.slash(
        server.channel, "ask", question="What is the capital of Australia?"
    )
    assert asked.response is not None
    assert text_of(asked.response).startswith(translate("ja", ABSTAIN_TEXT))
