"""Turning the core's results into Discord messages that fit Discord's limits and ping no one.

Pure functions: no I/O, no client. Every piece of article text passes through `safe()`, which
neutralizes mentions, so `@everyone` in an article cannot reach anybody even if a send forgot
`allowed_mentions`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from urllib.parse import quote

import discord

from bot.direction import ISOLATES, is_right_to_left, isolated
from bot.guide_embeds import guide_embed, welcome_embed
from index import AddResult, Answer, Article, Citation, RebuildResult, Stats
from index.storage.conversations import Votes

__all__ = [
    "EMBED_DESCRIPTION",
    "EMBED_TITLE",
    "EMBED_TOTAL",
    "FOLLOW_UP_HINT",
    "IN_THREAD_HINT",
    "THREAD_HINT",
    "guide_embed",
    "welcome_embed",
    "MESSAGE",
    "PAGE_SIZE",
    "added_by",
    "adder_id",
    "add_result_text",
    "answer_embed",
    "article_pages",
    "clip",
    "progress_text",
    "readable_question",
    "rebuild_text",
    "safe",
    "stats_embed",
]

# Discord's limits (https://discord.com/developers/docs/resources/message#embed-object-embed-limits).
MESSAGE = 2_000
EMBED_TITLE = 256
EMBED_DESCRIPTION = 4_096
EMBED_FOOTER = 2_048
EMBED_TOTAL = 6_000
CHOICE_NAME = 100

PAGE_SIZE = 10
# A source line longer than this loses its link first, then its title is cut.
SOURCE_LINE = 450
LINK = 512
# Below this the answer's own text would be unreadable, so sources give way first.
MIN_BODY = 600
MAX_SOURCES = 10
# A declined answer shows its closest passages with an excerpt each; three fit an embed well.
CLOSEST_SOURCES = 3
PASSAGE_EXCERPT = 400

ANSWER_COLOUR = discord.Colour.blurple()
ABSTAIN_COLOUR = discord.Colour.light_grey()
FOLLOW_UP_HINT = "Reply to this message to ask a follow-up about these sources."
THREAD_HINT = "Ask follow-ups in this answer's thread; I keep track of the conversation."
IN_THREAD_HINT = "Ask another question here; I keep track of the conversation."
ABSTAIN_HINT = (
    "Try other words, see what this server has with /articles, or search one article with "
    "/ask article:."
)

_MENTION = re.compile(r"@(everyone|here|[!&]?\d+)", re.IGNORECASE)
_MARKER = re.compile(r"\[(\d+)\]")
_OPEN_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)\[")  # a "[" after an even run of backslashes
_ZWSP = "\u200b"
_ADDER = re.compile(r"\((\d{5,25})\)\s*$")


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


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _readable(text: str) -> str:
    """Mention syntax as a reader would say it: `<@123>` is "@someone", not a number."""
    text = re.sub(r"<@&\d+>", "@role", text)
    text = re.sub(r"<@!?\d+>", "@someone", text)
    return re.sub(r"<#\d+>", "#channel", text)


def _date(value: str | None) -> str | None:
    return value[:10] if value else None


def _link_target(url: str | None) -> str | None:
    """A URL safe inside a Markdown link: http(s) only, no spaces or parentheses, not too long."""
    if not url or not url.lower().startswith(("http://", "https://")):
        return None
    url = quote(url, safe=":/?#[]@!$&'*+,;=%~-._")
    return url if len(url) <= LINK else None


def source_line(citation: Citation, limit: int = SOURCE_LINE) -> str:
    """`[1] Title, ¶4 (site, date)`, the title linked to the quoted sentence where possible."""
    where = ", ".join(x for x in (citation.site, citation.author, _date(citation.published)) if x)
    tail = f", ¶{citation.paragraph}" + (f" ({safe(_one_line(where))})" if where else "")
    head = f"**[{citation.n}]** "
    title = _one_line(citation.title) or "Untitled"
    link = _link_target(citation.link) or _link_target(citation.url)
    if link and len(head) + len(tail) + len(link) + 4 + 20 > limit:
        link = _link_target(citation.url)  # the plain URL is shorter than the fragment link
        if link and len(head) + len(tail) + len(link) + 4 + 20 > limit:
            link = None
    room = limit - len(head) - len(tail) - (len(link) + 4 if link else 0)
    # Brackets would end the link text early; the title is clipped before escaping grows it.
    shown = safe(clip(title.replace("[", "(").replace("]", ")"), max(room // 2, 10)))
    shown = isolated(clip(shown, max(room - 2, 10)))
    label = f"[{shown}]({link})" if link else shown
    return clip(head + label + tail, limit)


def _again_line(citation: Citation, first: int, limit: int) -> str:
    """`[2] ¶7 of [1]`: another paragraph of an article a line above already names."""
    link = _link_target(citation.link) or _link_target(citation.url)
    if link and len(link) + 40 > limit:  # the fragment link first gives way, then any link
        link = _link_target(citation.url)
        link = link if link and len(link) + 40 <= limit else None
    where = f"[¶{citation.paragraph}]({link})" if link else f"¶{citation.paragraph}"
    return f"**[{citation.n}]** {where} of [{first}]"


def _source_lines(citations: list[Citation], limit: int) -> list[str]:
    """One line a source; an article's title (and site, author, date) only on its first."""
    first: dict[int, int] = {}
    lines = []
    for c in citations:
        if c.article_id in first:
            lines.append(_again_line(c, first[c.article_id], limit))
        else:
            first[c.article_id] = c.n
            lines.append(source_line(c, limit))
    return lines


def cited_numbers(answer: Answer) -> list[int]:
    """The source numbers the answer's text refers to, in order of first use."""
    seen: dict[int, None] = {}
    for match in _MARKER.finditer(answer.answer):
        seen.setdefault(int(match.group(1)), None)
    known = {c.n for c in answer.citations}
    return [n for n in seen if n in known]


def _shown(answer: Answer) -> list[Citation]:
    if answer.abstained:
        return answer.citations[:CLOSEST_SOURCES]
    cited = set(cited_numbers(answer))
    chosen = [c for c in answer.citations if c.n in cited] or answer.citations[:5]
    return chosen[:MAX_SOURCES]


def _fit_segments(pieces: list[tuple[str, str]], budget: int) -> str:
    """Shorten the answer's sentences fairly so the whole fits, keeping every `[n]` marker.

    `pieces` are (text, marker) pairs; the shortest texts keep all their words and the longest
    share what is left (water-filling), so one huge sentence cannot push out the others.
    """
    # Each piece is followed by a space and its marker, and pieces are joined by spaces; a
    # right-to-left piece takes two more characters for its isolates.
    fixed = sum(len(marker) + 2 + ISOLATES * is_right_to_left(text) for text, marker in pieces)
    room = max(budget - fixed, 0)
    limits = [len(text) for text, _ in pieces]
    if sum(limits) > room:
        order = sorted(range(len(pieces)), key=lambda i: limits[i])
        left, remaining = room, len(pieces)
        for i in order:
            share = left // remaining
            limits[i] = min(limits[i], share)
            left -= limits[i]
            remaining -= 1
    parts = []
    for (text, marker), limit in zip(pieces, limits, strict=True):
        part = isolated(clip(text, limit)) if limit > 0 else ""
        parts.append(" ".join(p for p in (part, marker) if p))
    return " ".join(p for p in parts if p)


def _answer_body(answer: Answer, budget: int) -> str:
    text = answer.answer.strip()
    # Split into (sentence, marker) pairs; escaping happens per piece, before fitting.
    pieces: list[tuple[str, str]] = []
    last = 0
    for match in _MARKER.finditer(text):
        pieces.append((safe(text[last : match.start()].strip()), match.group(0)))
        last = match.end()
    rest = text[last:].strip()
    if rest:
        pieces.append((safe(rest), ""))
    return _fit_segments(pieces, budget)


def readable_question(question: str, limit: int) -> str:
    """A question as a title (of an embed, of a thread): one line, mentions as words."""
    return clip(safe(_readable(_one_line(question)), markdown=False), limit)


def answer_embed(answer: Answer, *, follow_up: str | None = FOLLOW_UP_HINT) -> discord.Embed:
    """The answer and its numbered sources in one embed within Discord's limits.

    Links inside an embed never unfurl into previews, and the numbering of the sources always
    matches the `[n]` markers left in the (possibly shortened) answer. `follow_up` says where
    to ask the next question.
    """
    shown = _shown(answer)
    title = readable_question(answer.question, EMBED_TITLE)
    # A follow-up to an answer that found nothing would find nothing either.
    footer = follow_up if shown and not answer.abstained else None
    budget = EMBED_DESCRIPTION
    line_limit = SOURCE_LINE
    if answer.abstained:
        # Each closest passage is shown under its source line, so the reader can judge it.
        per = max((budget - MIN_BODY) // max(len(shown), 1), 120)
        line_limit = min(SOURCE_LINE, per // 2)
        excerpt = min(PASSAGE_EXCERPT, per - line_limit - 6)
        blocks = [
            line + "\n> " + isolated(clip(safe(_one_line(c.text)), excerpt - 2))
            for c, line in zip(shown, _source_lines(shown, line_limit), strict=True)
        ]
        sources = "\n".join(blocks)
        said = f"{answer.answer.strip()} {ABSTAIN_HINT}"
        body = clip(safe(said), budget - len(sources) - 2)
        description = f"{body}\n\n{sources}" if sources else body
    else:
        line_limit = min(SOURCE_LINE, (budget - MIN_BODY) // max(len(shown), 1))
        sources = "\n".join(_source_lines(shown, line_limit))
        header = "\n\n**Sources**\n" if sources else ""
        # A block quote: the sentences are the articles' words, not the bot's.
        body = "> " + _answer_body(answer, budget - len(header) - len(sources) - 2)
        description = body + header + sources
    embed = discord.Embed(
        title=title,
        description=clip(description, EMBED_DESCRIPTION),
        colour=ABSTAIN_COLOUR if answer.abstained else ANSWER_COLOUR,
    )
    if footer:
        embed.set_footer(text=footer)
    return embed


# adding, listing, progress


def added_by(user: discord.abc.User) -> str:
    """Who added an article, readable in the CLI and parseable back to the member's id."""
    return f"{user.name} ({user.id})"


def adder_id(value: str | None) -> int | None:
    match = _ADDER.search(value or "")
    return int(match.group(1)) if match else None


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def add_result_text(result: AddResult) -> str:
    """One sentence: what was added (title, site, paragraphs, skipped lines), or that it was."""
    article = result.article
    title = clip(safe(_one_line(article.title)), 300)
    site = f" from {clip(safe(article.site), 100)}" if article.site else ""
    link = _link_target(article.url)
    where = f" <{link}>" if link else ""
    if not result.added:
        return clip(
            f"**{title}**{site} is already in this server's articles (#{article.number}), "
            f"so nothing was added.{where}",
            MESSAGE,
        )
    skipped = len(result.skipped)
    left_out = f", {_plural(skipped, 'line')} skipped as not part of the article" if skipped else ""
    return clip(
        f"Added **{title}**{site} (#{article.number}): {_plural(article.paragraphs, 'paragraph')} "
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
    title = clip(_one_line(article.title).replace("[", "(").replace("]", ")"), 120)
    link = _link_target(article.url)
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
            text=f"Page {number + 1} of {count} · {_plural(len(articles), 'article')}, newest first"
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
        f"Rebuilt this server's index: {_plural(result.passages, 'passage')} {what} "
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
