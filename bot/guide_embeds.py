"""What the bot says of itself: the guide a member asks for with /help, and the welcome a new
server sees (both shown by the guide cog through render.py)."""

from __future__ import annotations

import discord

from index.messages import N_, translate

__all__ = ["guide_embed", "welcome_embed"]

ABOUT = N_(
    "I answer questions about the articles this server has added, quoting the sentences that "
    "answer and citing each source down to the paragraph. When the articles do not hold the "
    "answer, I say so and show the closest passages instead."
)
ASKING = N_(
    "**Ask** with `/ask`, by mentioning me with a question, or with a follow-up in an answer's "
    "thread or in reply to it: I keep track of the conversation. `/ask article:` narrows a "
    "question to one article. Rate answers with their Helpful / Not helpful buttons."
)
ABOUT_ARTICLES = N_(
    "**What an article is about**: `/summary article:` gives a few of its own sentences, each "
    'cited; "tl;dr?" or "what is this about?", in any language, asks the same of the article '
    "just added, the one in a thread's conversation, or the one you name. `/digest` lists what "
    "the server added lately."
)
ADDING = N_(
    "**Add** an article with `/add url:`, `/add file:` (.txt, .md, .html, .pdf), or `/add` alone "
    "to paste its text. `/articles` lists what the server has."
)
ADDING_ROLE = N_("**Adding** articles is open to members with the {role} role and to admins.")
ADMIN = N_(
    "**Admins** can `/remove` an article, `/rebuild` the server's index, see `/stats` and "
    "choose with `/settings` where mentions are answered, answer threads, the feed channel, "
    "a digest on schedule and who may add."
)


def guide_embed(
    *, can_add: bool, admin: bool, editor_role: str | None, locale: str | None = None
) -> discord.Embed:
    """What the bot does and what this member may do with it, in `locale`'s words."""
    lines = [translate(locale, m) for m in (ABOUT, "", ASKING, ABOUT_ARTICLES)]
    if can_add:
        lines.append(translate(locale, ADDING))
    elif editor_role:
        role = discord.utils.escape_markdown(editor_role)
        lines.append(translate(locale, ADDING_ROLE, role=role))
    if admin:
        lines.append(translate(locale, ADMIN))
    return discord.Embed(title="articlebot", description="\n".join(lines), colour=0x5865F2)


def welcome_embed(editor_role: str | None, locale: str | None = None) -> discord.Embed:
    """The greeting a new server sees: everything, with who may do what."""
    embed = guide_embed(
        can_add=editor_role is None, admin=True, editor_role=editor_role, locale=locale
    )
    embed.title = translate(locale, N_("Thanks for adding articlebot"))
    embed.set_footer(
        text=translate(
            locale, N_("Start with /add to give me an article, then ask away. /help any time.")
        )
    )
    return embed
