"""Fixtures for the Discord layer: the real bot from `create_bot`, driven through SimCord.

SimCord (an in-process simulated Discord) runs discord.py's real command tree, option parsing,
checks and response methods, and enforces Discord's limits, permissions and allowed mentions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
import simcord
from bot_world import Server, make_server

from bot import BotSettings, create_bot
from bot.client import ArticleBot
from index import Library, Limits
from index.settings import Settings


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "bot_settings(**fields): BotSettings fields for the simcord_bot fixture"
    )


@pytest.fixture
def bot_library(make_library: Callable[..., Library]) -> Library:
    """A real data folder in tmp_path with the session's model; URLs may be on 127.0.0.1."""
    return make_library(limits=Limits(allow_private_networks=True))


@pytest.fixture
def simcord_bot(bot_library: Library, request: pytest.FixtureRequest) -> ArticleBot:
    marker = request.node.get_closest_marker("bot_settings")
    settings = BotSettings(core=Settings(data_dir=bot_library.data_dir))
    if marker:
        settings = replace(settings, **marker.kwargs)
    return create_bot(settings, library=bot_library)


@pytest.fixture
def server(simcord_env: simcord.Env, bot_library: Library) -> Server:
    return make_server(simcord_env, bot_library, "Newsroom")


@pytest.fixture
def sample_attachment(sample_path: Path) -> tuple[str, bytes]:
    return sample_path.name, sample_path.read_bytes()
