"""The bot's own words in the reader's language: one gettext catalogue a locale (`locales/`,
.po files made with Babel), and which locale a reader gets.

What the articles say is never translated; what articlebot says around it is: a decline, the
headings over sources, the hints under an answer. The core writes its messages in English and
marks them with `N_` (so that `pybabel extract` finds them); the edges (the command line, the
Discord cogs) choose the reader's locale and `translate` them, so `--json` keeps its keys and
its `answer` is what the member reads.
"""

from __future__ import annotations

from index.messages.answers import in_locale
from index.messages.catalogue import LOCALES, N_, display_name, translate
from index.messages.choice import discord_locale, env_locale, question_locale

__all__ = [
    "LOCALES",
    "N_",
    "discord_locale",
    "display_name",
    "env_locale",
    "in_locale",
    "question_locale",
    "translate",
]
