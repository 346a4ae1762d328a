"""Domain errors. Each message is one sentence that tells the user what to do."""

from __future__ import annotations

import re
import unicodedata

from index.text import BIDIRECTIONAL

__all__ = [
    "ArticlebotError",
    "ArticleNotFound",
    "BadInput",
    "ConfigurationError",
    "DiskFull",
    "FetchRefused",
    "IndexMismatch",
    "StorageError",
    "UnsuitableDatabase",
    "Worded",
    "first_line",
    "passwords_in",
    "shown",
    "without_passwords",
]


class Worded(Exception):
    """An error said in the reader's words: raised with an English message marked with `N_`
    and its fields (`BadInput(N_("That file is {size} MB."), size=...)`), `str()` is the
    English sentence, and the edges show `said_in(locale)`. A message given already formatted
    is shown as it is."""

    def __init__(self, message: str = "", /, **fields: object) -> None:
        super().__init__(message.format(**fields) if fields else message)
        self.message, self.fields = message, fields

    def said_in(self, locale: str | None) -> str:
        """The message in `locale`'s words (as it is where no catalogue holds it)."""
        from index.messages.catalogue import translate  # the catalogues only where shown

        return translate(locale, self.message, **self.fields) if self.message else str(self)


class ArticlebotError(Worded):
    """Base of every error the user may see; its message is shown as it is (in the reader's
    words where it was raised as a marked message: `Worded`)."""


class BadInput(ArticlebotError):
    """The file, text or question cannot be used."""


class ArticleNotFound(ArticlebotError):
    """No article with that id in the collection."""


class FetchRefused(ArticlebotError):
    """A URL was refused or could not be fetched."""


class IndexMismatch(ArticlebotError):
    """Stored vectors were made by another model or dimension."""


class StorageError(ArticlebotError):
    """The data folder cannot be opened, read or written (permissions, full disk, damage)."""


class DiskFull(StorageError):
    """The disk holding the data folder is full: nothing was stored, nothing stored was lost."""


class ConfigurationError(ArticlebotError):
    """What no restart mends: a setting, or what it points at, that a person has to change
    (the bot stops for good on it rather than be restarted into it again)."""


class UnsuitableDatabase(StorageError, ConfigurationError):
    """The database answers, but cannot hold articles as it is (its encoding, its pgvector)."""


# What a message may show of text that came from outside (a backup's manifest, a URL): shown
# escaped and cut short, and never a password.

# No backslash in either: in a JSON line it escapes the quote that ends the string.
_PASSWORD_IN_URL = re.compile(r"(://[^:/@\s\"'<>\\]*):([^\s\"'<>\\]*)@")
# `password=...` as a URL's query parameter (`?password=`, `&password=`) or in libpq's
# keyword/value form (`host=db password='x y'`), as libpq's own messages repeat it.
_PASSWORD_PARAMETER = re.compile(
    r"(?i)(\bpass(?:word|wd)?\s*=\s*)('(?:[^'\\]|\\.)*'|\"[^\"]*\"|[^\s&;#\"'\\]+)"
)


def without_passwords(text: str, hidden: str = "***") -> str:
    """`text` with the password of every URL in it, and every `password=` value, hidden."""
    text = _PASSWORD_IN_URL.sub(rf"\1:{hidden}@", text)
    return _PASSWORD_PARAMETER.sub(rf"\g<1>{hidden}", text)


def passwords_in(text: str) -> list[str]:
    """The passwords `without_passwords` hides in `text`, as written (a `Redactor` hides their
    percent-encoded and decoded forms too)."""
    found = [m.group(2) for m in _PASSWORD_IN_URL.finditer(text)]
    found += [m.group(2).strip("'\"") for m in _PASSWORD_PARAMETER.finditer(text)]
    return sorted({p for p in found if p})


def first_line(error: BaseException) -> str:
    """An error's first line, for a log or a page, without any password it quotes (a database
    address in a driver's message)."""
    return without_passwords((str(error).strip().splitlines() or [type(error).__name__])[0])


def shown(value: object, limit: int = 120) -> str:
    """`value` as a message may print it: control characters escaped (a terminal obeys them:
    colours, cursor moves, a title set), and line breaks and bidirectional overrides too (they
    make one line read as another), the rest as written, Unicode's joiners included; cut at
    `limit` characters."""
    text = str(value)
    out = "".join(ascii(c)[1:-1] if _unsafe(c) else c for c in text[:limit])
    return out + ("…" if len(text) > limit else "")


def _unsafe(c: str) -> bool:
    return unicodedata.category(c) in ("Cc", "Cs", "Zl", "Zp") or c in BIDIRECTIONAL
