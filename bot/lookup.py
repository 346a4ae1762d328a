"""Finding an article from what a member typed or picked in an autocomplete list."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import discord
from discord import app_commands

from index import Article, ArticleNotFound, Collection
from index.messages import N_

from .errors import Refused
from .render import CHOICE_NAME, adder_id, clip, safe

if TYPE_CHECKING:
    from .client import ArticleBot

__all__ = ["MAX_CHOICES", "article_choices", "choices", "find_article", "own_article"]

MAX_CHOICES = 25  # Discord shows at most 25 suggestions


def _name(article: Article) -> str:
    site = f" ({article.site})" if article.site else ""
    return clip(" ".join(f"{article.title}{site}".split()), CHOICE_NAME)


def choices(articles: Sequence[Article], typed: str) -> list[app_commands.Choice[str]]:
    """Articles whose title contains what was typed (or whose number it is), titles starting
    with it first; each choice's value is the article's number in this server."""
    needle = typed.strip().casefold().lstrip("#")
    starts, contains = [], []
    for article in articles:
        title = article.title.casefold()
        if not needle or title.startswith(needle) or str(article.number) == needle:
            starts.append(article)
        elif needle in title or needle in (article.site or "").casefold():
            contains.append(article)
    return [
        app_commands.Choice(name=_name(a), value=str(a.number))
        for a in (starts + contains)[:MAX_CHOICES]
    ]


def find_article(articles: Sequence[Article], value: str) -> Article:
    """The article a picked choice or a typed "#3" (its number in this server) or title means."""
    wanted = value.strip().lstrip("#")
    if wanted.isdigit():
        for article in articles:
            if article.number == int(wanted):
                return article
    folded = wanted.casefold()
    exact = [a for a in articles if a.title.casefold() == folded]
    partial = [a for a in articles if folded and folded in a.title.casefold()]
    found = exact or partial
    if len(found) == 1:
        return found[0]
    shown = safe(clip(value.strip(), 80))
    if found:
        raise ArticleNotFound(
            N_("Several articles match “{typed}”; pick one from the suggestions as you type."),
            typed=shown,
        )
    raise ArticleNotFound(
        N_(
            "No article in this server matches “{typed}”; pick one from the suggestions as you "
            "type, or see `/articles`."
        ),
        typed=shown,
    )


async def article_choices(
    bot: ArticleBot, interaction: discord.Interaction, current: str, *, mine_only: bool = False
) -> list[app_commands.Choice[str]]:
    """Autocomplete from this server's article titles (max 25; an autocomplete cannot defer)."""
    if interaction.guild_id is None:
        return []
    collection = bot.collection(interaction.guild_id)
    try:
        # The list is read in a thread, but with a deadline: Discord waits 3 s at most.
        articles = await asyncio.wait_for(asyncio.to_thread(collection.articles), timeout=2.0)
    except TimeoutError:
        return []
    if mine_only:
        articles = [a for a in articles if adder_id(a.added_by) == interaction.user.id]
    return choices(articles, current)


_NOT_YOURS = {
    "remove": N_(
        "Only the member who added that article, or someone with the Manage Server "
        "permission, can remove it."
    ),
    "refresh": N_(
        "Only the member who added that article, or someone with the Manage Server "
        "permission, can refresh it."
    ),
}


async def own_article(
    collection: Collection,
    interaction: discord.Interaction,
    value: str,
    verb: Literal["remove", "refresh"],
) -> Article:
    """The article picked, if this member may change it: admins any, members what they added."""
    found = find_article(await asyncio.to_thread(collection.articles), value)
    if not interaction.permissions.manage_guild and adder_id(found.added_by) != interaction.user.id:
        raise Refused(_NOT_YOURS[verb])
    return found
