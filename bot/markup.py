"""Discord's limits, and text from an article or a member made safe to show: no pings, no
accidental formatting, cut with an ellipsis. What every message of the bot is built from
(answer_embed.py, listings.py, digest_render.py; render.py names them all)."""

from __future__ import annotations

import re
from urllib.parse import quote

import discord

__all__ = [
    "CHOICE_NAME",
    "EMBED_DESCRIPTION",
    "EMBED_FOOTER",
    "EMBED_TITLE",
    "EMBED_TOTAL",
    "LINK",
    "MESSAGE",
    "clip",
    "link_target",
    "one_line",
    "readable_question",
    "safe",
    "spoken_mentions",
]

# Discord's limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
MESSAGE = 2_000
EMBED_TITLE = 256
EMBED_DESCRIPTION = 4_096
EMBED_FOOTER = 2_048
EMBED_TOTAL = 6_000
CHOICE_NAME = 100
LINK = 512

_MENTION = re.compile(r"@(everyone|here|[!&]?\d+)", re.IGNORECASE)
_OPEN_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)\[")  # a "[" after an even run of backslashes
_ZWSP = "\u200b"


def safe(text: str, *, markdown: bool = True) -> str:
    """Text from an article or a user, shown as written: no pings, no accidental formatting."""
    if markdown:
        text = discord.utils.escape_markdown(text)
        # escape_markdown escapes only the first masked link of a line; every "[" is escaped
        # here, so no "[text](url)" in an article or a title becomes a live link.
        text = _OPEN_BRACKET.sub(r"\1\\[", text)
    return _MENTION.sub(lambda m: f"@{_ZWSP}{m.group(1)}", text)


def clip(text: str, limit: int) -> str:
    """At most `limit` characters, ending with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    if limit <= 1:
        return "…"[:limit]
    cut = text[: limit - 1].rstrip()
    # A cut right after a backslash would escape the ellipsis and show the backslash.
    return cut.rstrip("\\") + "…"


def one_line(text: str) -> str:
    return " ".join(text.split())


def spoken_mentions(text: str) -> str:
    """Mention syntax as a reader would say it: `<@123>` is "@someone", not a number."""
    text = re.sub(r"<@&\d+>", "@role", text)
    text = re.sub(r"<@!?\d+>", "@someone", text)
    return re.sub(r"<#\d+>", "#channel", text)


def link_target(url: str | None) -> str | None:
    """A URL safe inside a Markdown link: http(s) only, no spaces or parentheses, not too long."""
    if not url or not url.lower().startswith(("http://", "https://")):
        return None
    url = quote(url, safe=":/?#[]@!$&'*+,;=%~-._")
    return url if len(url) <= LINK else None


def readable_question(question: str, limit: int) -> str:
    """A question as a title (of an embed, of a thread): one line, mentions as words."""
    return clip(safe(spoken_mentions(one_line(question)), markdown=False), limit)
