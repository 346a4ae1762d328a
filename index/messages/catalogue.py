"""The catalogues: `locales/LL_CC/LC_MESSAGES/articlebot.po` (gettext's names: `pt_BR` for
Discord's `pt-BR`), read with Babel once a locale.

Read from the .po files themselves rather than compiled .mo files: they are small, the wheel
and the image ship them as they are, and a message missing from one falls back to English (the
catalogue test keeps every one complete).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

__all__ = ["DOMAIN", "ENGLISH", "FOLDER", "LOCALES", "N_", "display_name", "messages", "translate"]

DOMAIN = "articlebot"
FOLDER = Path(__file__).with_name("locales")
ENGLISH = "en-US"
# The locales (locales.json): Discord's own, with Arabic, Hebrew and Persian.
LOCALES: tuple[str, ...] = tuple(
    json.loads(FOLDER.with_name("locales.json").read_text(encoding="utf-8"))["locales"]
)


def N_(message: str) -> str:
    """Marks an English message for the catalogue; the edges translate it."""
    return message


@functools.cache
def messages(locale: str) -> dict[str, str]:
    """The translated messages of `locale`, by their English text (none for English)."""
    path = FOLDER / locale.replace("-", "_") / "LC_MESSAGES" / f"{DOMAIN}.po"
    if locale.startswith("en") or not path.is_file():
        return {}
    from babel.messages.pofile import read_po  # only where a catalogue is read

    with path.open("rb") as po:
        catalog = read_po(po, locale=locale.replace("-", "_"))
    return {
        str(m.id): str(m.string)
        for m in catalog
        if m.id and isinstance(m.string, str) and m.string and not m.fuzzy
    }


def translate(locale: str | None, message: str, **fields: object) -> str:
    """`message` (an English text marked with N_) in `locale`'s words, its `{fields}` filled;
    a text no catalogue holds (the articles' own) comes back as it is."""
    said = messages(locale or ENGLISH).get(message, message)
    return said.format(**fields) if fields else said


def display_name(locale: str) -> str:
    """The locale's name for itself, as Babel's CLDR data gives it (`português (Brasil)`)."""
    from babel import Locale, UnknownLocaleError

    try:
        return str(Locale.parse(locale.replace("-", "_")).get_display_name() or locale)
    except (ValueError, UnknownLocaleError):
        return locale
