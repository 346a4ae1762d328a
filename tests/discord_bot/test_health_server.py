"""The health and metrics server faced with anyone on its network, on a real port of 127.0.0.1: a
request that never finishes is dropped within seconds, a malformed one is a debug line without a
traceback, `/healthz` names a store's failure without its password, and an address other
machines reach draws a warning. And the bot that cannot reach Discord ends in one log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import time
from pathlib import Path
from typing import Any

import discord
import pytest
import pytest_asyncio
from test_bot_metrics import free_port, get

from bot.health import HealthServer
from bot.metrics import Metrics
from index.errors import StorageError
from index.logs import Redactor

pytestmark = pytest.mark.asyncio

PASSWORD = "S3cret-Pw_9"
DOWN = f"postgresql://bot@db.internal:5432/articles?sslmode=require&password={PASSWORD}"


class FakeStoreThatIsDown:
    """A store whose server is gone (none can be stopped on purpose here in a second)."""

    def ping(self) -> None:
        raise StorageError(f"Lost the database {DOWN} (server closed the connection)")


class FakeLibraryWithDownStore:
    """What the server reads of a library: whether the model is loaded, its store, its totals,
    and its data folder (the backups' record: none here)."""

    model_loaded = True
    store = FakeStoreThatIsDown()
    data_dir = "/nonexistent/articlebot-data"

    def totals(self) -> Any:
        self.store.ping()


@pytest_asyncio.fixture
async def server() -> Any:
    client = discord.Client(intents=discord.Intents.none())
    port = free_port()
    health = HealthServer(
        client,
        FakeLibraryWithDownStore(),  # type: ignore[arg-type]
        Metrics(),
        "127.0.0.1",
        port,
        redact=Redactor([PASSWORD]),
    )
    await health.start()
    yield port
    await health.stop()
    await client.close()


async def test_healthz_names_the_store_failure_without_its_password(server: int) -> None:
    status, _, body = await get(server, "/healthz")
    assert status == 503
    assert "not connected to Discord's gateway yet" in body
    assert "the store does not answer: Lost the database postgresql://bot@db.internal" in body
    assert PASSWORD not in body
    status, _, metrics = await get(server, "/metrics")
    assert status == 200 and "articlebot_store_up 0.0" in metrics


def exchange(port: int, data: bytes, wait: float = 15.0) -> tuple[bytes, float]:
    """Send `data`, then read until the server closes: what it said and how long it took."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as conn:
        started = time.monotonic()
        conn.sendall(data)
        said = b""
        while chunk := conn.recv(4096):
            said += chunk
        return said, time.monotonic() - started


async def test_a_request_that_never_finishes_is_dropped_within_seconds(server: int) -> None:
    said, took = await asyncio.to_thread(exchange, server, b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
    assert said == b"" and took < 8
    said, took = await asyncio.to_thread(exchange, server, b"")  # connects and says nothing
    assert said == b"" and took < 8


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /healthz HTTP/1.1\r\nBad Header: x\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: " + b"x" * 20_000 + b"\r\n\r\n",
        b"GET /healthz HTTP/9.9\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",  # a TLS hello
    ],
)
async def test_a_malformed_request_is_a_debug_line_without_traceback(
    server: int, caplog: pytest.LogCaptureFixture, request_bytes: bytes
) -> None:
    caplog.set_level(logging.DEBUG, logger="aiohttp")
    said, _ = await asyncio.to_thread(exchange, server, request_bytes)
    assert said.startswith(b"HTTP/1.") and b" 400 " in said.split(b"\r\n")[0]
    await asyncio.sleep(0.1)
    loud = [r for r in caplog.records if r.levelno >= logging.INFO and r.name.startswith("aiohttp")]
    assert loud == []
    quiet = [r for r in caplog.records if r.name.startswith("aiohttp")]
    assert quiet and all(r.exc_info is None for r in quiet)


async def test_an_address_others_reach_draws_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="bot.health")
    client = discord.Client(intents=discord.Intents.none())
    for host, warned in (("127.0.0.1", False), ("0.0.0.0", True)):
        caplog.clear()
        health = HealthServer(client, None, Metrics(), host, free_port())  # type: ignore[arg-type]
        await health.start()
        await health.stop()
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert bool(warnings) == warned, warnings
    assert "no password" in warnings[0] and "127.0.0.1" in warnings[0]
    await client.close()


def test_the_bot_that_cannot_reach_discord_ends_in_one_json_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.__main__ import main

    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    for name in [n for n in os.environ if n.startswith("ARTICLEBOT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setattr(discord.http.Route, "BASE", discord.http.Route.BASE)  # put back after
    monkeypatch.setenv("DISCORD_TOKEN", "not-a-real-token")
    monkeypatch.setenv("ARTICLEBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("ARTICLEBOT_LOG_FORMAT", "json")
    monkeypatch.setenv("ARTICLEBOT_DISCORD_API_BASE", f"http://127.0.0.1:{free_port()}/api/v10")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        with pytest.raises(SystemExit) as ended:
            main()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert ended.value.code == 1
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    errors = [line for line in lines if line["level"] == "error"]
    assert len(errors) == 1 and "exception" not in errors[0], lines
    assert errors[0]["message"].startswith("Cannot reach Discord (")
