"""articlebot's Discord adapter: the only package that imports discord."""

from __future__ import annotations

from .client import ArticleBot, create_bot
from .config import BotSettings

__all__ = ["ArticleBot", "BotSettings", "create_bot"]
