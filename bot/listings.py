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
    safe,
)
from index import AddResult, Article, RebuildResult, Stats
from index.messages import N_
from index.messages.catalogue import NP_, number, translate, translate_count
from index.storage.conversations import Votes

__all__ = [
    "PAGE_SIZE",
    "add_result_text",
    "added_by",
    "adder_id",
    "article_line",
    "article_pages",
    "page_footer",
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


def add_result_text(result: AddResult, locale: str | None = None) -> str:
    """One sentence: what was added (title, site, paragraphs, skipped lines), or that it was."""
    article = result.article
    title = clip(safe(one_line(article.title)), 300)
    link = link_target(article.url)
    where = f" <{link}>" if link else ""
    site = clip(safe(article.site), 100) if article.site else None
    if not result.added:
        said = translate(
            locale,
            N_(
                "**{title}** from {site} is already in this server's articles (#{number}), "
                "so nothing was added."
            )
            if site
            else N_(
                "**{title}** is already in this server's articles (#{number}), so nothing "
                "was added."
            ),
            title=title,
            site=site,
            number=article.number,
        )
        return clip(said + where, MESSAGE)
    paragraphs = translate_count(
        locale, NP_("{count} paragraph indexed", "{count} paragraphs indexed"), article.paragraphs
    )
    skipped = len(result.skipped)
    if skipped:
        paragraphs += translate(locale, N_(", ")) + translate_count(
            locale,
            NP_(
                "{count} line skipped as not part of the article",
                "{count} lines skipped as not part of the article",
            ),
            skipped,
        )
    said = translate(
        locale,
        N_("Added **{title}** from {site} (#{number}): {paragraphs}.")
        if site
        else N_("Added **{title}** (#{number}): {paragraphs}."),
        title=title,
        site=site,
        number=article.number,
        paragraphs=paragraphs,
    )
    return clip(said + where, MESSAGE)


def _when(value: str) -> str:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return safe(value[:10])
    return discord.utils.format_dt(moment, "R")  # Discord shows it in each reader's language


def _adder(value: str | None, locale: str | None) -> str:
    member = adder_id(value)
    if member is not None:
        return f"<@{member}>"  # renders as the member's current name; sends never ping
    return safe(clip(value, 60)) if value else translate(locale, N_("someone"))


def article_line(article: Article, locale: str | None = None) -> str:
    title = clip(one_line(article.title).replace("[", "(").replace("]", ")"), 120)
    link = link_target(article.url)
    shown = f"[{safe(title)}]({link})" if link else f"**{safe(title)}**"
    site = f" · {clip(safe(article.site), 60)}" if article.site else ""
    added = translate(
        locale,
        N_("added by {who} {when}"),
        who=_adder(article.added_by, locale),
        when=_when(article.added_at),
    )
    return f"`#{article.number}` {shown}{site} · {number(article.paragraphs, locale)} ¶ · {added}"


def article_pages(
    articles: Sequence[Article], guild_name: str, locale: str | None = None
) -> list[discord.Embed]:
    """The server's articles, newest first, `PAGE_SIZE` to a page."""
    title = clip(
        translate(locale, N_("Articles in {server}"), server=safe(guild_name, markdown=False)),
        EMBED_TITLE,
    )
    if not articles:
        return [
            discord.Embed(
                title=title,
                description=translate(
                    locale,
                    N_("No articles yet. Add one with `/add` (a URL, a file, or pasted text)."),
                ),
            )
        ]
    pages = []
    count = (len(articles) + PAGE_SIZE - 1) // PAGE_SIZE
    for page in range(count):
        chunk = articles[page * PAGE_SIZE : (page + 1) * PAGE_SIZE]
        lines = "\n".join(clip(article_line(a, locale), 390) for a in chunk)
        embed = discord.Embed(title=title, description=clip(lines, EMBED_DESCRIPTION))
        embed.set_footer(text=page_footer(locale, page + 1, count, len(articles)))
        pages.append(embed)
    return pages


def page_footer(locale: str | None, page: int, pages: int, articles: int) -> str:
    """`Page 2 of 3 · 25 articles, newest first`."""
    where = translate(locale, N_("Page {page} of {pages}"), page=page, pages=pages)
    what = translate_count(
        locale, NP_("{count} article, newest first", "{count} articles, newest first"), articles
    )
    return f"{where} · {what}"


# The core's names of the stages it reports (index/collection.py, index/pipeline.py).
_STAGES = {
    "Embedding": N_("Embedding"),
    "Re-embedding": N_("Re-embedding"),
    "Indexing": N_("Indexing"),
}


def progress_text(stage: str, done: int, total: int, locale: str | None = None) -> str:
    """`Re-embedding 1,204 / 5,000 passages (24%)`: what is counted is passages."""
    named = translate(locale, _STAGES[stage]) if stage in _STAGES else stage
    if total <= 1:
        return f"{named}…"
    percent = int(100 * done / total) if total else 100
    return translate(
        locale,
        N_("{stage} {done} / {total} passages ({percent}%)"),
        stage=named,
        done=number(done, locale),
        total=number(total, locale),
        percent=percent,
    )


def rebuild_text(result: RebuildResult, locale: str | None = None) -> str:
    if result.passages == 0:
        return translate(
            locale, N_("There is nothing to rebuild yet: this server has no articles.")
        )
    rebuilt = (
        NP_(
            "{count} passage re-embedded and re-indexed",
            "{count} passages re-embedded and re-indexed",
        )
        if result.reembedded
        else NP_("{count} passage re-indexed", "{count} passages re-indexed")
    )
    return translate(
        locale,
        N_("Rebuilt this server's index: {rebuilt} in {seconds} s ({index} index)."),
        rebuilt=translate_count(locale, rebuilt, result.passages),
        seconds=f"{result.seconds:.1f}",
        index=result.index_type,
    )


def _size(count: int) -> str:
    value = float(count)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1000 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "bytes" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{count} bytes"  # unreachable; keeps type checkers content


def stats_embed(
    stats: Stats, guild_name: str, votes: Votes, locale: str | None = None
) -> discord.Embed:
    def said(message: str, **fields: object) -> str:
        return translate(locale, message, **fields)

    embed = discord.Embed(
        title=clip(
            said(N_("Index of {server}"), server=safe(guild_name, markdown=False)), EMBED_TITLE
        )
    )
    embed.add_field(name=said(N_("Articles")), value=number(stats.articles, locale))
    embed.add_field(
        name=said(N_("Passages")),
        value=said(
            N_("{passages} ({indexed} indexed)"),
            passages=number(stats.passages, locale),
            indexed=number(stats.indexed, locale),
        ),
    )
    embed.add_field(name=said(N_("Model")), value=clip(safe(stats.model), 1_024))
    embed.add_field(
        name=said(N_("Index")), value=f"{safe(stats.index_type)}, {_size(stats.index_bytes)}"
    )
    embed.add_field(
        name=said(N_("Feedback on answers")),
        value=said(
            N_(
                "👍 {helpful} helpful · 👎 {not_helpful} not helpful "
                "(`articlebot feedback --json` lists them)"
            ),
            helpful=number(votes.helpful, locale),
            not_helpful=number(votes.not_helpful, locale),
        ),
        inline=False,
    )
    return embed
