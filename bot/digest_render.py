"""The digest as Discord shows it: what a server added lately, each article's title linked and
the first line of its summary under it, a page an embed (render.py's limits and safety)."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from index import Summary

from .render import EMBED_DESCRIPTION, EMBED_TITLE, article_line, clip, safe

__all__ = ["DIGEST_PAGE", "digest_pages"]

DIGEST_PAGE = 5  # articles a page: each carries a line or two of its summary
_LINE = 300


def digest_pages(summaries: Sequence[Summary], guild_name: str, days: float) -> list[discord.Embed]:
    """The articles added in the last `days` days, newest first, `DIGEST_PAGE` to a page."""
    span = "day" if days == 1 else f"{days:g} days"
    title = clip(f"New in {safe(guild_name, markdown=False)}: the last {span}", EMBED_TITLE)
    if not summaries:
        return [
            discord.Embed(
                title=title,
                description=f"Nothing was added in the last {span}. Add an article with `/add`.",
            )
        ]
    count = (len(summaries) + DIGEST_PAGE - 1) // DIGEST_PAGE
    pages = []
    for number in range(count):
        chunk = summaries[number * DIGEST_PAGE : (number + 1) * DIGEST_PAGE]
        blocks = [
            clip(article_line(s.article), 390)
            + ("\n> " + safe(clip(" ".join(s.line.split()), _LINE)) if s.line else "")
            for s in chunk
        ]
        embed = discord.Embed(title=title, description=clip("\n\n".join(blocks), EMBED_DESCRIPTION))
        embed.set_footer(
            text=f"Page {number + 1} of {count} · {len(summaries):,} articles, newest first · "
            "/summary for one in full"
        )
        pages.append(embed)
    return pages
