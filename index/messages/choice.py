"""Which locale a reader gets: a slash command's Discord locale; a question's language where
it is clear (index/text's question_language); else the server's preferred locale, or on the
command line LANG / LC_MESSAGES; else English. A server may fix it (`/settings language`)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from index.messages.catalogue import ENGLISH, FOLDER, LOCALES
from index.text import question_language, traditional_chinese

__all__ = ["discord_locale", "env_locale", "locale_of_language", "question_locale"]

_DATA = json.loads(FOLDER.with_name("locales.json").read_text(encoding="utf-8"))
# A question's language (ISO 639-1) to the locale that speaks it.
_BY_LANGUAGE: dict[str, str] = _DATA["by_language"]
_TRADITIONAL: str = _DATA["traditional"]
_LATIN_AMERICA: str = _DATA["latin_america"]


def locale_of_language(language: str) -> str | None:
    return _BY_LANGUAGE.get(language)


def question_locale(question: str, fallback: str | None = None) -> str:
    """The locale of `question`'s language when that is clear, else `fallback`'s (a locale
    or a language code), else English."""
    found = question_language(question, _BY_LANGUAGE)
    if found is not None:
        locale = _BY_LANGUAGE[found]
        if locale == _BY_LANGUAGE.get("zh") and traditional_chinese(question):
            return _TRADITIONAL
        return locale
    return _known(fallback) or ENGLISH


def discord_locale(value: object, fallback: str | None = None) -> str:
    """A Discord locale (`interaction.locale`, a guild's `preferred_locale`) as a catalogue's."""
    return _known(str(value) if value is not None else None) or _known(fallback) or ENGLISH


def env_locale(env: Mapping[str, str]) -> str | None:
    """The locale LC_ALL, LC_MESSAGES or LANG names (`pt_BR.UTF-8`), if a catalogue speaks it."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "").split(".")[0].split("@")[0]
        if value and value not in ("C", "POSIX"):
            return _known(value)
    return None


def _known(value: str | None) -> str | None:
    """A locale tag (`pt-BR`, `pt_BR`, `zh-Hant-TW`, `es-MX`, `de`) as a catalogue's locale."""
    if not value:
        return None
    tag = value.replace("_", "-")
    exact = {loc.lower(): loc for loc in LOCALES}
    if tag.lower() in exact:
        return exact[tag.lower()]
    language, _, region = tag.partition("-")
    locale = _BY_LANGUAGE.get(language.lower())
    if locale is None or not region:
        return locale
    # Another region of a language two locales speak: Taiwan's and Hong Kong's Chinese,
    # Latin America's Spanish.
    for other in (_TRADITIONAL, _LATIN_AMERICA):
        if other.split("-")[0] == language.lower() and region.upper() in _REGIONS[other]:
            return other
    return locale


_REGIONS = {
    "zh-TW": {"TW", "HK", "MO", "HANT", "HANT-TW", "HANT-HK"},
    "es-419": {"419", "MX", "AR", "CO", "CL", "PE", "VE", "US", "UY", "EC", "GT", "BO"},
}
