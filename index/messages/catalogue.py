"""The catalogues: `locales/LL_CC/LC_MESSAGES/articlebot.po` (gettext's names: `pt_BR` for
Discord's `pt-BR`), read with Babel once a locale.

Read from the .po files themselves rather than compiled .mo files: they are small, the wheel
and the image ship them as they are, and a message missing from one falls back to English (the
catalogue test keeps every one complete).
"""

from __future__ import annotations

import functools
import gettext
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from babel.messages.catalog import Catalog

__all__ = [
    "DOMAIN",
    "ENGLISH",
    "FOLDER",
    "LOCALES",
    "NP_",
    "N_",
    "display_name",
    "local_date",
    "messages",
    "plurals",
    "translate",
    "translate_count",
]

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


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """Marks an English message whose words depend on a count (`{count} paragraphs`)."""
    return singular, plural


# A locale's plural messages: by their English singular, the forms and the rule that picks
# one for a count (gettext's Plural-Forms, as the catalogue states it).
Plurals = tuple[dict[str, tuple[str, ...]], Callable[[int], int]]


@functools.cache
def _catalogue(locale: str) -> Catalog | None:
    path = FOLDER / locale.replace("-", "_") / "LC_MESSAGES" / f"{DOMAIN}.po"
    if locale.startswith("en") or not path.is_file():
        return None
    from babel.messages.pofile import read_po  # only where a catalogue is read

    with path.open("rb") as po:
        return read_po(po, locale=locale.replace("-", "_"))


@functools.cache
def messages(locale: str) -> dict[str, str]:
    """The translated messages of `locale`, by their English text (none for English)."""
    catalog = _catalogue(locale)
    if catalog is None:
        return {}
    return {
        str(m.id): str(m.string)
        for m in catalog
        if m.id and isinstance(m.id, str) and isinstance(m.string, str) and m.string
        if not m.fuzzy
    }


@functools.cache
def plurals(locale: str) -> Plurals:
    """The translated plural messages of `locale` (none for English), and its plural rule."""
    catalog = _catalogue(locale)
    if catalog is None:
        return {}, _english_form
    forms = {
        str(m.id[0]): tuple(str(f) for f in m.string)
        for m in catalog
        if isinstance(m.id, tuple | list) and not m.fuzzy
        if isinstance(m.string, tuple | list) and all(m.string)
    }
    return forms, gettext.c2py(catalog.plural_expr)


def _english_form(count: int) -> int:
    return 0 if count == 1 else 1


def translate(locale: str | None, message: str, **fields: object) -> str:
    """`message` (an English text marked with N_) in `locale`'s words, its `{fields}` filled;
    a text no catalogue holds (the articles' own) comes back as it is."""
    said = messages(locale or ENGLISH).get(message, message)
    if not fields:
        return said
    try:
        return said.format(**fields)
    except (KeyError, IndexError, ValueError):  # a catalogue's slip never costs the message
        return message.format(**fields)


def translate_count(
    locale: str | None, message: tuple[str, str], count: int, **fields: object
) -> str:
    """`message` (a pair marked with NP_) in `locale`'s words, in the form its rule gives
    `count`, with `{count}` (written with the locale's digit grouping) and its fields filled."""
    forms, rule = plurals(locale or ENGLISH)
    chosen = forms.get(message[0]) or message
    try:
        said = chosen[min(rule(count), len(chosen) - 1)]
    except (ValueError, ArithmeticError):  # a rule that does not read: the last form
        said = chosen[-1]
    try:
        return said.format(count=number(count, locale), **fields)
    except (KeyError, IndexError, ValueError):  # as translate: the English form instead
        english = message[0] if count == 1 else message[1]
        return english.format(count=number(count, locale), **fields)


def number(count: int, locale: str | None) -> str:
    """`count` as `locale` writes a whole number (`1,204`, `1.204`, `1 204`)."""
    from babel.numbers import format_decimal

    try:
        return str(format_decimal(count, locale=(locale or ENGLISH).replace("-", "_")))
    except (ValueError, LookupError):
        return f"{count:,}"


def local_date(value: str | None, locale: str | None) -> str | None:
    """An article's date (ISO 8601, as stored) as `locale` writes a date (`20 févr. 2025`);
    a value that is no date is shown as it is."""
    if not value:
        return None
    from datetime import date

    from babel.dates import format_date

    try:
        day = date.fromisoformat(value[:10])
        return str(format_date(day, "medium", locale=(locale or ENGLISH).replace("-", "_")))
    except (ValueError, LookupError):
        return value[:10]


def display_name(locale: str) -> str:
    """The locale's name for itself, as Babel's CLDR data gives it (`português (Brasil)`)."""
    from babel import Locale, UnknownLocaleError

    try:
        return str(Locale.parse(locale.replace("-", "_")).get_display_name() or locale)
    except (ValueError, UnknownLocaleError):
        return locale
