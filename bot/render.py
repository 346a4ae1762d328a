"""Turning the core's results into Discord messages that fit Discord's limits and ping no one.

Pure functions: no I/O, no client. Every piece of article text passes through `safe()`, which
neutralizes mentions, so `@everyone` in an article cannot reach anybody even if a send forgot
`allowed_mentions`. The parts live apart, and this module names them all, as the cogs import
them: the limits and safe text (markup.py), the answer embed (answer_embed.py), what the other
commands say (listings.py) and the guide (guide_embeds.py).
"""

from __future__ import annotations

from bot.answer_embed import (
    FOLLOW_UP_HINT,
    IN_THREAD_HINT,
    THREAD_HINT,
    answer_embed,
    cited_numbers,
    source_line,
)
from bot.guide_embeds import guide_embed, welcome_embed
from bot.listings import (
    PAGE_SIZE,
    add_result_text,
    added_by,
    adder_id,
    article_line,
    article_pages,
    progress_text,
    rebuild_text,
    stats_embed,
)
from bot.markup import (
    CHOICE_NAME,
    EMBED_DESCRIPTION,
    EMBED_FOOTER,
    EMBED_TITLE,
    EMBED_TOTAL,
    MESSAGE,
    clip,
    readable_question,
    safe,
)

__all__ = [
    "CHOICE_NAME",
    "EMBED_DESCRIPTION",
    "EMBED_FOOTER",
    "EMBED_TITLE",
    "EMBED_TOTAL",
    "FOLLOW_UP_HINT",
    "IN_THREAD_HINT",
    "MESSAGE",
    "PAGE_SIZE",
    "THREAD_HINT",
    "add_result_text",
    "added_by",
    "adder_id",
    "answer_embed",
    "article_line",
    "article_pages",
    "cited_numbers",
    "clip",
    "guide_embed",
    "progress_text",
    "readable_question",
    "rebuild_text",
    "safe",
    "source_line",
    "stats_embed",
    "welcome_embed",
]
