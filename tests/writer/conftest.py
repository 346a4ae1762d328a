"""Fixtures of the writer's tests: the scripted fake server, and the real one where it runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_writer import FakeWriterServer
from llama_server import LlamaServer, NotStarted

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="session")
def fake_writer() -> Iterator[FakeWriterServer]:
    server = FakeWriterServer()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """llama-server with SmolLM2-135M on 127.0.0.1, or the test is reported as not run."""
    try:
        server = LlamaServer(tmp_path_factory.mktemp("llama") / "llama-server.log")
    except NotStarted as why:
        pytest.skip(f"the real writer server cannot run here: {why}")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def article_paths() -> dict[str, Path]:
    """Three articles the tests wrote: a forest, a flood, and a library's hours with an
    instruction planted in it."""
    return {
        "forest": DATA / "forest-article.txt",
        "flood": DATA / "flood-story.txt",
        "library": DATA / "library-hours.txt",
    }
