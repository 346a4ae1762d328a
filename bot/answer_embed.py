"""The answer as Discord shows it: its quoted sentences and numbered sources in one embed within
Discord's limits, the numbering always matching the `[n]` markers left in the text."""

from __future__ import annotations

import re

import discord

from bot.direction import ISOLATES, is_right_to_left, isolated
from bot.markup import (
    EMBED_DESCRIPTION,
    EMBED_TITLE,
    clip,
    link_target,
    one_line,
    readable_question,
    safe,
)
from index import Answer, Citation
from index.messages import N_, in_locale, translate
from index.messages.catalogue import ENGLISH, local_date

__all__ = [
    "FOLLOW_UP_HINT",
    "IN_THREAD_HINT",
    "THREAD_HINT",
    "answer_embed",
    "cited_numbers",
    "source_line",
]

# A source line longer than this loses its link first, then its title is cut.
SOURCE_LINE = 450
# Below this the answer's own text would be unreadable, so sources give way first.
MIN_BODY = 600
MAX_SOURCES = 10
# A declined answer shows its closest passages with an excerpt each; three fit an embed well.
CLOSEST_SOURCES = 3
PASSAGE_EXCERPT = 400

ANSWER_COLOUR = discord.Colour.blurple()
ABSTAIN_COLOUR = discord.Colour.light_grey()
# The bot's own words, in English; shown in the reader's locale (index/messages).
FOLLOW_UP_HINT = N_("Reply to this message to ask a follow-up about these sources.")
THREAD_HINT = N_("Ask follow-ups in this answer's thread; I keep track of the conversation.")
IN_THREAD_HINT = N_("Ask another question here; I keep track of the conversation.")
ABSTAIN_HINT = N_(
    "Try other words, see what this server has with /articles, or search one article with "
    "/ask article:."
)
SOURCES = N_("Sources")

_MARKER = re.compile(r"\[(\d+)\]")


def source_line(citation: Citation, limit: int = SOURCE_LINE, locale: str | None = None) -> str:
    """`[1] Title, ¶4 (site, date)`, the title linked to the quoted sentence where possible,
    the date as `locale` writes one."""
    published = local_date(citation.published, locale)
    where = ", ".join(x for x in (citation.site, citation.author, published) if x)
    tail = f", ¶{citation.paragraph}" + (f" ({safe(one_line(where))})" if where else "")
    head = f"**[{citation.n}]** "
    title = one_line(citation.title) or translate(locale, N_("Untitled"))
    link = link_target(citation.link) or link_target(citation.url)
    if link and len(head) + len(tail) + len(link) + 4 + 20 > limit:
        link = link_target(citation.url)  # the plain URL is shorter than the fragment link
        if link and len(head) + len(tail) + len(link) + 4 + 20 > limit:
            link = None
    room = limit - len(head) - len(tail) - (len(link) + 4 if link else 0)
    # Brackets would end the link text early; the title is clipped before escaping grows it.
    shown = safe(clip(title.replace("[", "(").replace("]", ")"), max(room // 2, 10)))
    shown = isolated(clip(shown, max(room - 2, 10)))
    label = f"[{shown}]({link})" if link else shown
    return clip(head + label + tail, limit)


def _again_line(citation: Citation, first: int, limit: int, locale: str | None) -> str:
    """`[2] ¶7 of [1]`: another paragraph of an article a line above already names."""
    link = link_target(citation.link) or link_target(citation.url)
    if link and len(link) + 40 > limit:  # the fragment link first gives way, then any link
        link = link_target(citation.url)
        link = link if link and len(link) + 40 <= limit else None
    where = f"[¶{citation.paragraph}]({link})" if link else f"¶{citation.paragraph}"
    again = translate(locale, N_("{paragraph} of [{first}]"), paragraph=where, first=first)
    return f"**[{citation.n}]** {again}"


def _source_lines(citations: list[Citation], limit: int, locale: str | None) -> list[str]:
    """One line a source; an article's title (and site, author, date) only on its first."""
    first: dict[int, int] = {}
    lines = []
    for c in citations:
        if c.article_id in first:
            lines.append(_again_line(c, first[c.article_id], limit, locale))
        else:
            first[c.article_id] = c.n
            lines.append(source_line(c, limit, locale))
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


def answer_embed(
    answer: Answer, *, follow_up: str | None = FOLLOW_UP_HINT, locale: str | None = None
) -> discord.Embed:
    """The answer and its numbered sources in one embed within Discord's limits.

    Links inside an embed never unfurl into previews, and the numbering of the sources always
    matches the `[n]` markers left in the (possibly shortened) answer. `follow_up` says where
    to ask the next question. The bot's own words (a decline, the headings, the hints) are in
    `locale`'s; the quotes are the articles'.
    """
    answer = in_locale(answer, locale or ENGLISH)
    shown = _shown(answer)
    title = readable_question(answer.question, EMBED_TITLE)
    # A follow-up to an answer that found nothing would find nothing either.
    footer = translate(locale, follow_up) if follow_up and shown and not answer.abstained else None
    budget = EMBED_DESCRIPTION
    line_limit = SOURCE_LINE
    if answer.abstained:
        # Each closest passage is shown under its source line, so the reader can judge it.
        per = max((budget - MIN_BODY) // max(len(shown), 1), 120)
        line_limit = min(SOURCE_LINE, per // 2)
        excerpt = min(PASSAGE_EXCERPT, per - line_limit - 6)
        blocks = [
            line + "\n> " + isolated(clip(safe(one_line(c.text)), excerpt - 2))
            for c, line in zip(shown, _source_lines(shown, line_limit, locale), strict=True)
        ]
        sources = "\n".join(blocks)
        said = f"{answer.answer.strip()} {translate(locale, ABSTAIN_HINT)}"
        body = clip(safe(said), budget - len(sources) - 2)
        description = f"{body}\n\n{sources}" if sources else body
    else:
        line_limit = min(SOURCE_LINE, (budget - MIN_BODY) // max(len(shown), 1))
        sources = "\n".join(_source_lines(shown, line_limit, locale))
        header = f"\n\n**{translate(locale, SOURCES)}**\n" if sources else ""
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
