"""articlebot's Discord adapter: the only package that imports discord.

Its names are imported when first asked for, not with the package: `python -m bot.healthcheck`,
which a container runs every 30 s, imports this package first, and must not pay for discord,
the store and the embedding model (seconds and a hundred MB) to ask one URL.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import ArticleBot, create_bot
    from .config import BotSettings

__all__ = ["ArticleBot", "BotSettings", "create_bot"]

_HOMES = {"ArticleBot": ".client", "create_bot": ".client", "BotSettings": ".config"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name], __name__), name)
    globals()[name] = value  # asked once: later lookups find it without this function
    return value
