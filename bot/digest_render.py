"""The digest as Discord shows it: what a server added lately, each article's title linked and
the first line of its summary under it, a page an embed (render.py's limits and safety)."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from index import Summary
from index.messages import N_
from index.messages.catalogue import NP_, translate, translate_count

from .listings import page_footer
from .render import EMBED_DESCRIPTION, EMBED_TITLE, article_line, clip, safe

__all__ = ["DIGEST_PAGE", "digest_pages"]

DIGEST_PAGE = 5  # articles a page: each carries a line or two of its summary
_LINE = 300


def digest_pages(
    summaries: Sequence[Summary], guild_name: str, days: int, locale: str | None = None
) -> list[discord.Embed]:
    """The articles added in the last `days` days, newest first, `DIGEST_PAGE` to a page."""
    server = safe(guild_name, markdown=False)
    title = clip(
        translate_count(
            locale,
            NP_("New in {server}: the last day", "New in {server}: the last {count} days"),
            days,
            server=server,
        ),
        EMBED_TITLE,
    )
    if not summaries:
        nothing = NP_(
            "Nothing was added in the last day. Add an article with `/add`.",
            "Nothing was added in the last {count} days. Add an article with `/add`.",
        )
        return [discord.Embed(title=title, description=translate_count(locale, nothing, days))]
    count = (len(summaries) + DIGEST_PAGE - 1) // DIGEST_PAGE
    pages = []
    for page in range(count):
        chunk = summaries[page * DIGEST_PAGE : (page + 1) * DIGEST_PAGE]
        blocks = [
            clip(article_line(s.article, locale), 390)
            + ("\n> " + safe(clip(" ".join(s.line.split()), _LINE)) if s.line else "")
            for s in chunk
        ]
        embed = discord.Embed(title=title, description=clip("\n\n".join(blocks), EMBED_DESCRIPTION))
        footer = page_footer(locale, page + 1, count, len(summaries))
        more = translate(locale, N_("/summary for one in full"))
        embed.set_footer(text=f"{footer} · {more}")
        pages.append(embed)
    return pages
