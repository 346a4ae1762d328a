"""The bot's own words in the member's language, through SimCord: a slash command's frame in
the member's Discord locale; a mention's in the question's language, else the server's
preferred locale; the quotes always the article's own.

SimCord sends every interaction as `en-US`; Discord sends the member's locale, so the tests
set it on the interaction payload SimCord builds (`member_locale`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import discord
import pytest
import simcord
import simcord.interactions
from bot_world import Server, last_said

from bot.answer_embed import ABSTAIN_HINT, FOLLOW_UP_HINT, SOURCES, THREAD_HINT
from bot.client import ArticleBot
from bot.feedback import HELPFUL, NOT_HELPFUL, vote_text
from bot.guide_embeds import ABOUT
from bot.words import CatalogueTranslator
from index import Library
from index.answers.compose import ABSTAIN_TEXT
from index.ingest.addresses import NOT_WEB
from index.messages import LOCALES, translate
from index.messages.catalogue import translate_count

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
    await server.member.send(
        server.channel,
        f"{me.mention} Wie viel Geld hat der Stadtrat für die Renovierung bewilligt?",
    )
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


# Discord's locales a catalogue speaks: every one of them but English (Arabic, Hebrew and
# Persian catalogues serve questions in those languages; Discord has no such client locale).
DISCORD_TRANSLATED = [
    loc.value for loc in discord.Locale if not loc.value.startswith("en") and loc.value in LOCALES
]


def _options(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """Every command, subcommand and option of a command's payload, the command first."""
    found = [payload]
    for option in payload.get("options", []):
        found += _options(option)
    return found


async def test_every_description_reaches_discord_in_each_locale_and_fits(
    server: Server, simcord_bot: ArticleBot
) -> None:
    """What Discord is sent: each command's and option's description, and each choice's
    name, in every Discord locale a catalogue speaks, within Discord's 100 characters; the
    names members type stay as they are."""
    translator = simcord_bot.tree.translator
    assert isinstance(translator, CatalogueTranslator)
    assert len(DISCORD_TRANSLATED) >= 30
    commands = simcord_bot.tree.get_commands()
    assert {c.name for c in commands} >= {"ask", "add", "help", "settings", "summary"}
    for command in commands:
        payload = await command.get_translated_payload(simcord_bot.tree, translator)
        for item in _options(payload):
            assert not item.get("name_localizations"), item["name"]
            theirs = item.get("description_localizations") or {}
            assert sorted(theirs) == sorted(DISCORD_TRANSLATED), item["name"]
            for locale, text in theirs.items():
                assert text != item["description"] and 0 < len(text) <= 100, (locale, text)
            for choice in item.get("choices", []):
                named = choice.get("name_localizations") or {}
                assert sorted(named) == sorted(DISCORD_TRANSLATED), choice["name"]
    ja = await commands[0].get_translated_payload(simcord_bot.tree, translator)
    assert ja["description_localizations"]["ja"] == translate("ja", ja["description"])


async def test_help_buttons_and_refusals_are_in_the_member_s_locale(
    server: Server, member_locale: Callable[[str], None]
) -> None:
    server.add_text(ARTICLE, title=TITLE)
    member_locale("ja")
    shown = await server.member.slash(server.channel, "help")
    assert shown.response is not None and shown.response.ephemeral
    guide = text_of(shown.response)
    assert guide.startswith(translate("ja", ABOUT)) and "/ask" in guide
    assert ABOUT not in guide

    asked = await server.member.slash(
        server.channel, "ask", question="市議会は改修にいくら承認しましたか？"
    )
    answer = asked.response
    assert answer is not None
    labels = {b["label"] for row in answer.components for b in row["components"]}
    assert labels == {translate("ja", HELPFUL), translate("ja", NOT_HELPFUL)}
    voted = await server.member.click(answer, label=translate("ja", NOT_HELPFUL))
    assert voted.response is not None and voted.response.ephemeral
    assert voted.response.content == vote_text("recorded", False, "ja")
    assert not voted.response.content.isascii()

    member_locale("pt-BR")
    listed = await server.member.slash(server.channel, "articles")
    assert listed.response is not None
    (page,) = listed.response.embeds
    assert page.title == translate("pt-BR", "Articles in {server}", server=server.guild.name)
    assert f"{TITLE}**" in (page.description or "") and "adicionado" in (page.description or "")

    member_locale("de")
    both = await server.member.slash(
        server.channel, "add", url="https://example.com/a", file=("a.txt", b"Text.")
    )
    assert both.response is not None and both.response.ephemeral
    refusal = "Give a URL or a file, not both; run /add once for each."
    assert both.response.content == translate("de", refusal) != refusal
    assert "/add" in both.response.content
    # The core's own refusals too: a link the fetcher will not follow.
    ftp = await server.member.slash(server.channel, "add", url="ftp://example.com/article.txt")
    (told,) = ftp.followups
    assert told.ephemeral and told.content == translate("de", NOT_WEB) != NOT_WEB
    assert server.env.errors  # the refusals were handled (and acknowledged here)


async def test_a_server_s_own_posts_are_in_its_preferred_locale(
    simcord_env: simcord.Env, bot_library: Library
) -> None:
    """What the bot posts unasked (the scheduled digest) speaks the server's preferred locale,
    whatever the admin's own who set it up."""
    server = make_server_with_locale(simcord_env, bot_library, "fr")
    news = server.guild.create_text_channel("nouvelles")
    chosen = await server.admin.slash(
        server.channel, "settings digest", every="daily", channel=news
    )
    assert chosen.response is not None
    assert f"daily in <#{news.id}>" in text_of(chosen.response)  # SimCord's admin: en-US
    server.add_text(ARTICLE, title=TITLE)
    cog = simcord_env.bot.get_cog("Summaries")
    assert cog is not None
    assert await cog.post_digests(datetime.now(UTC) + timedelta(days=1)) == 1
    posted = last_said(news)
    assert posted is not None
    (page,) = posted.embeds
    day = ("New in {server}: the last day", "New in {server}: the last {count} days")
    assert page.title == translate_count("fr", day, 1, server=server.guild.name)
    assert page.title != translate_count("en-US", day, 1, server=server.guild.name)
    assert TITLE in (page.description or "")
