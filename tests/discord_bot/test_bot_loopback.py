"""The installed program for real: `python -m bot` as a subprocess against a local fake Discord.

This is what no in-process test proves: the process starts, reads its settings, logs in, syncs
its commands over HTTP, keeps a gateway session, answers an INTERACTION_CREATE with a cited
follow-up (loading the real model in a worker thread), and stops cleanly on SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import discord
import pytest
from fake_discord import GUILD_ID, FakeDiscord, Request, interaction, until
from tarpit import Behaviour, drip_headers, serving

from index import Library
from index.embedding.embedder import Embedder
from index.ingest.readers import read_path
from index.version import version

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # the bot started as a real process

QUESTION = "Who is meeting with New York City Mayor Eric Adams?"
# Deadlines for a cold process (imports, model load) on a slow machine, not timing assertions.
FETCH_TIMEOUT_S = 5
START_DEADLINE = 180
ANSWER_DEADLINE = 240


@pytest.fixture
def slow_site() -> Iterator[Callable[[Behaviour], str]]:
    with serving() as start:
        yield start


async def test_installed_bot_logs_in_syncs_and_answers_an_interaction(
    tmp_path: Path,
    embedder: Embedder,
    sample_path: Path,
    cli_models: Path,
    slow_site: Callable[[Behaviour], str],
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    # The session's model export, shared: the process loads it instead of exporting again.
    (data / "models").symlink_to(cli_models, target_is_directory=True)
    library = Library(data, embedder=embedder)
    library.collection(f"guild-{GUILD_ID}").add(read_path(sample_path), added_by="setup")
    library.close()

    fake = FakeDiscord()
    runner, port = await fake.start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "ARTICLEBOT_"))}
    env.update(
        DISCORD_TOKEN="fake-token",
        ARTICLEBOT_DATA_DIR=str(data),
        ARTICLEBOT_DISCORD_API_BASE=f"http://127.0.0.1:{port}/api/v10",
        ARTICLEBOT_DISCORD_GATEWAY=f"ws://127.0.0.1:{port}/gateway",
        # A slow site is added below, then the bot is stopped while it is still being read.
        ARTICLEBOT_ALLOW_PRIVATE_NETWORKS="1",
        ARTICLEBOT_FETCH_TIMEOUT_S=str(FETCH_TIMEOUT_S),
        HF_HUB_OFFLINE="1",
        ARTICLEBOT_METRICS_ADDRESS=f"127.0.0.1:{metrics_port}",
    )
    log = tmp_path / "bot.log"
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tmp_path, env=env, stdout=out, stderr=out
        )
    try:
        await until(fake, [process], lambda _: fake.identified.is_set(), START_DEADLINE, [log])
        await until(fake, [process], lambda _: fake.synced.is_set(), START_DEADLINE, [log])
        paths = [(r.method, r.path) for r in fake.requests]
        assert ("GET", "/users/@me") in paths
        assert ("PUT", f"/applications/{900_000_000_000_000_001}/commands") in paths
        assert {c["name"] for c in fake.commands} >= {"ask", "add", "articles", "rebuild"}

        snowflake = discord.utils.time_snowflake(datetime.now(UTC))
        options = [{"name": "question", "type": 3, "value": QUESTION}]
        await fake.push_interaction(interaction(fake.command_id("ask"), "ask", options, snowflake))

        def answered(requests: list[Request]) -> bool:
            return any(
                r.path.startswith("/webhooks/") and r.body and r.body.get("embeds")
                for r in requests
            )

        await until(fake, [process], answered, ANSWER_DEADLINE, [log])
        callback = next(r for r in fake.requests if r.path.endswith("/callback"))
        assert callback.path == f"/interactions/{snowflake}/fake-interaction-token/callback"
        assert callback.body["type"] == 5  # deferred first: the 3-second window
        reply = next(r for r in fake.requests if r.path.startswith("/webhooks/") and r.body)
        (embed,) = reply.body["embeds"]
        assert "Tom Homan" in embed["description"] and "[1]" in embed["description"]
        assert reply.body["allowed_mentions"] == {"parse": []}
        labels = [b["label"] for row in reply.body["components"] for b in row["components"]]
        assert labels == ["Helpful", "Not helpful"]

        def threaded(requests: list[Request]) -> bool:
            return any(r.path.endswith("/threads") for r in requests)

        # The answer opens a thread for its follow-ups, named after the question.
        await until(fake, [process], threaded, ANSWER_DEADLINE, [log])
        thread = next(r for r in fake.requests if r.path.endswith("/threads"))
        assert thread.body is not None and thread.body["name"] == QUESTION

        # The process serves its health and metrics: healthy once discord.py is ready (its
        # servers loaded, a moment after login), and one question counted.
        async with aiohttp.ClientSession(f"http://127.0.0.1:{metrics_port}") as http:
            for _ in range(60):
                async with http.get("/healthz") as health:
                    said = (health.status, await health.text())
                if said[0] == 200:
                    break
                await asyncio.sleep(0.5)
            assert said == (200, f"ok\narticlebot {version()}\n")
            async with http.get("/metrics") as metrics:
                text = await metrics.text()
        assert 'articlebot_questions_total{outcome="answered",via="slash"} 1.0' in text
        assert "Tom Homan" not in text and QUESTION not in text

        # An add in flight from a site that drips its headers forever: SIGTERM still stops the
        # bot, at the latest when the fetch deadline ends the read.
        slow_add = discord.utils.time_snowflake(datetime.now(UTC))
        url = [{"name": "url", "type": 3, "value": slow_site(drip_headers)}]
        await fake.push_interaction(interaction(fake.command_id("add"), "add", url, slow_add))

        def deferred(requests: list[Request]) -> bool:
            return any(r.path.startswith(f"/interactions/{slow_add}/") for r in requests)

        await until(fake, [process], deferred, ANSWER_DEADLINE, [log])
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), timeout=FETCH_TIMEOUT_S + 30)
        output = log.read_text()
        assert code == 0, output[-4000:]
        assert "Traceback" not in output, output[-4000:]
        # One line for the question, with its outcome and time but not its text; no token.
        assert "question outcome=answered via=slash" in output
        assert QUESTION not in output and "fake-token" not in output
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await fake.close()
        await runner.cleanup()
