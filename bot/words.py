"""Whose language the bot's own words are in: the reader's, chosen once per message.

What the core and the cogs say is written in English and marked with `N_` (index/messages);
this module picks the locale a reader gets and translates to it:

- an interaction (a slash command, a button, a form): the member's Discord locale;
- a message (a mention, a follow-up): the question's language where it is clear, else the
  server's preferred locale;
- what the bot posts on its own (a welcome, feed news, a digest): the server's preferred
  locale;

and in each case the language a server fixed with `/settings language` first. Command and
option descriptions reach Discord translated through `CatalogueTranslator`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import discord
from discord import app_commands

from index.errors import ArticlebotError
from index.messages import N_, discord_locale, question_locale, translate
from index.messages.catalogue import messages

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = [
    "CatalogueTranslator",
    "interaction_locale",
    "message_locale",
    "server_locale",
    "translate",
]

# The choices of /settings digest, whose values stay English (a choice's value is what the
# command receives); the names members see are translated like any description.
DIGEST_CHOICES = (N_("daily"), N_("weekly"), N_("off"))


def _fixed(bot: object, guild_id: int | None) -> str | None:
    """The language a server fixed with /settings language, if any (`bot` is the client an
    interaction came to: an ArticleBot, whose settings say)."""
    store = getattr(bot, "server_settings", None)
    if store is None or guild_id is None:
        return None
    try:
        language: str | None = store.get(guild_id).language
    except ArticlebotError:  # the store is down: the member's own locale, whatever is said
        return None
    return language


def interaction_locale(interaction: discord.Interaction) -> str:
    """The locale of a reply to an interaction: the server's fixed one, else the member's."""
    return _fixed(interaction.client, interaction.guild_id) or discord_locale(interaction.locale)


def server_locale(bot: ArticleBot, guild: discord.Guild | None) -> str:
    """The locale of what the bot posts on its own in a server: fixed, else the server's."""
    if guild is None:
        return discord_locale(None)
    return _fixed(bot, guild.id) or discord_locale(guild.preferred_locale)


def message_locale(bot: ArticleBot, message: discord.Message, question: str) -> str:
    """The locale of a reply to a message: fixed, else the question's language where it is
    clear, else the server's preferred locale."""
    guild = message.guild
    fixed = _fixed(bot, guild.id) if guild is not None else None
    preferred = discord_locale(guild.preferred_locale) if guild is not None else None
    return fixed or question_locale(question, preferred)


class CatalogueTranslator(app_commands.Translator):
    """Command and option descriptions, and choice names, in each Discord locale a catalogue
    speaks; command and option names stay as they are (members type them in every language,
    and the docs name them)."""

    _NAMES = frozenset(
        {
            app_commands.TranslationContextLocation.command_name,
            app_commands.TranslationContextLocation.group_name,
            app_commands.TranslationContextLocation.parameter_name,
        }
    )

    async def translate(
        self,
        string: app_commands.locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        if context.location in self._NAMES:
            return None
        ours = discord_locale(locale.value)
        # A Discord locale no catalogue speaks falls back to English: no localization sent.
        if ours.startswith("en") or ours.lower() != locale.value.lower():
            return None
        return messages(ours).get(string.message)
