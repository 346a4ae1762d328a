"""Fixtures for the Discord layer: the real bot from `create_bot`, driven through SimCord."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from bot import BotSettings, create_bot
from bot.client import ArticleBot
from index import Library
from index.settings import Settings


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "bot_settings(**fields): BotSettings fields for the simcord_bot fixture"
    )


@pytest.fixture
def bot_library(make_library: Callable[..., Library]) -> Library:
    """The bot's library: a real data folder in tmp_path, sharing the session's loaded model."""
    return make_library()


@pytest.fixture
def simcord_bot(bot_library: Library, request: pytest.FixtureRequest) -> ArticleBot:
    marker = request.node.get_closest_marker("bot_settings")
    settings = BotSettings(core=Settings(data_dir=bot_library.data_dir))
    if marker:
        settings = replace(settings, **marker.kwargs)
    return create_bot(settings, library=bot_library)
