"""What the other commands say: an added article, the server's article pages, the progress of
long work, a rebuild's result and the index's figures."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import discord

from bot.markup import (
    EMBED_DESCRIPTION,
    EMBED_TITLE,
    MESSAGE,
    clip,
    link_target,
    one_line,
    plural,
    safe,
)
from index import AddResult, Article, RebuildResult, Stats
from index.storage.conversations import Votes

__all__ = [
    "PAGE_SIZE",
    "add_result_text",
    "added_by",
    "adder_id",
    "article_line",
    "article_pages",
    "progress_text",
    "rebuild_text",
    "stats_embed",
]

PAGE_SIZE = 10
_ADDER = re.compile(r"\((\d{5,25})\)\s*$")


def added_by(user: discord.abc.User) -> str:
    """Who added an article, readable in the CLI and parseable back to the member's id."""
    return f"{user.name} ({user.id})"


def adder_id(value: str | None) -> int | None:
    match = _ADDER.search(value or "")
    return int(match.group(1)) if match else None


def add_result_text(result: AddResult) -> str:
    """One sentence: what was added (title, site, paragraphs, skipped lines), or that it was."""
    article = result.article
    title = clip(safe(one_line(article.title)), 300)
    site = f" from {clip(safe(article.site), 100)}" if article.site else ""
    link = link_target(article.url)
    where = f" <{link}>" if link else ""
    if not result.added:
        return clip(
            f"**{title}**{site} is already in this server's articles (#{article.number}), "
            f"so nothing was added.{where}",
            MESSAGE,
        )
    skipped = len(result.skipped)
    left_out = f", {plural(skipped, 'line')} skipped as not part of the article" if skipped else ""
    return clip(
        f"Added **{title}**{site} (#{article.number}): {plural(article.paragraphs, 'paragraph')} "
        f"indexed{left_out}.{where}",
        MESSAGE,
    )


def _when(value: str) -> str:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return safe(value[:10])
    return discord.utils.format_dt(moment, "R")


def _adder(value: str | None) -> str:
    member = adder_id(value)
    if member is not None:
        return f"<@{member}>"  # renders as the member's current name; sends never ping
    return safe(clip(value, 60)) if value else "someone"


def article_line(article: Article) -> str:
    title = clip(one_line(article.title).replace("[", "(").replace("]", ")"), 120)
    link = link_target(article.url)
    shown = f"[{safe(title)}]({link})" if link else f"**{safe(title)}**"
    site = f" · {clip(safe(article.site), 60)}" if article.site else ""
    return (
        f"`#{article.number}` {shown}{site} · {article.paragraphs:,} ¶ · "
        f"added by {_adder(article.added_by)} {_when(article.added_at)}"
    )


def article_pages(articles: Sequence[Article], guild_name: str) -> list[discord.Embed]:
    """The server's articles, newest first, `PAGE_SIZE` to a page."""
    title = clip(f"Articles in {safe(guild_name, markdown=False)}", EMBED_TITLE)
    if not articles:
        return [
            discord.Embed(
                title=title,
                description="No articles yet. Add one with `/add` (a URL, a file, or pasted text).",
            )
        ]
    pages = []
    count = (len(articles) + PAGE_SIZE - 1) // PAGE_SIZE
    for number in range(count):
        chunk = articles[number * PAGE_SIZE : (number + 1) * PAGE_SIZE]
        lines = "\n".join(clip(article_line(a), 390) for a in chunk)
        embed = discord.Embed(title=title, description=clip(lines, EMBED_DESCRIPTION))
        embed.set_footer(
            text=f"Page {number + 1} of {count} · {plural(len(articles), 'article')}, newest first"
        )
        pages.append(embed)
    return pages


def progress_text(stage: str, done: int, total: int) -> str:
    """`Re-embedding 1,204 / 5,000 passages (24%)`: what is counted is passages."""
    if total <= 1:
        return f"{stage}…"
    percent = int(100 * done / total) if total else 100
    return f"{stage} {done:,} / {total:,} passages ({percent}%)"


def rebuild_text(result: RebuildResult) -> str:
    what = "re-embedded and re-indexed" if result.reembedded else "re-indexed"
    if result.passages == 0:
        return "There is nothing to rebuild yet: this server has no articles."
    return (
        f"Rebuilt this server's index: {plural(result.passages, 'passage')} {what} "
        f"in {result.seconds:.1f} s ({result.index_type} index)."
    )


def _size(count: int) -> str:
    value = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{count} bytes"  # unreachable; keeps type checkers content


def stats_embed(stats: Stats, guild_name: str, votes: Votes) -> discord.Embed:
    embed = discord.Embed(title=clip(f"Index of {safe(guild_name, markdown=False)}", EMBED_TITLE))
    embed.add_field(name="Articles", value=f"{stats.articles:,}")
    embed.add_field(name="Passages", value=f"{stats.passages:,} ({stats.indexed:,} indexed)")
    embed.add_field(name="Model", value=clip(safe(stats.model), 1_024))
    embed.add_field(name="Index", value=f"{safe(stats.index_type)}, {_size(stats.index_bytes)}")
    embed.add_field(
        name="Feedback on answers",
        value=f"👍 {votes.helpful:,} helpful · 👎 {votes.not_helpful:,} not helpful "
        "(`articlebot feedback --json` lists them)",
        inline=False,
    )
    return embed
