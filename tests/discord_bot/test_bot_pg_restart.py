"""The bot as a real process (against the local fake Discord) over PostgreSQL, while the
database server is stopped and started again: a question during the outage is told so in one
sentence within seconds, /healthz says why it is unhealthy, and afterwards the same process
takes its claim on the shards again and answers: nothing is restarted but the database."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

import aiohttp
import discord
import pytest
from drills.pg_restart import RestartableServer
from fake_discord import GUILD_ID, FakeDiscord, Request, interaction, until

from index import Library
from index.embedding.embedder import Embedder
from index.storage.postgres.store import WAIT_TIMEOUT_S
from index.version import version

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # a bot process, a PostgreSQL server

ARTICLE = (
    "The harbor authority approved a new ferry terminal on Tuesday after a long debate.\n\n"
    "The terminal will cost 80 million dollars and is due to open in the spring of 2027."
)
QUESTION = "How much will the ferry terminal cost?"
# Deadlines for a cold process (imports, model load) on a slow machine, not timing assertions.
START_DEADLINE = 180
ANSWER_DEADLINE = 240


def said(requests: list[Request], token: str) -> str | None:
    """What the bot showed for the interaction with this token: the answer or the error (or
    the refusal it answered with at once, while the claim on its shards was not held)."""
    for r in requests:
        if r.path.endswith(f"/{token}/callback") and r.body and r.body.get("type") == 4:
            return str(r.body["data"].get("content"))
        if f"/{token}" in r.path and not r.path.endswith("/callback") and r.body:
            if r.body.get("embeds"):
                return str(r.body["embeds"][0].get("description", ""))
            if r.body.get("content"):
                return str(r.body["content"])
    return None


async def test_the_bot_answers_again_after_the_database_restarts(
    tmp_path: Path, embedder: Embedder, cli_models: Path
) -> None:
    server = RestartableServer()
    data = tmp_path / "data"
    data.mkdir()
    (data / "models").symlink_to(cli_models, target_is_directory=True)
    library = Library(data, database_url=server.database_url, embedder=embedder)
    library.collection(f"guild-{GUILD_ID}").add_text(ARTICLE, title="Harbor ferry")
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
        ARTICLEBOT_DATABASE_URL=server.database_url,
        ARTICLEBOT_DISCORD_API_BASE=f"http://127.0.0.1:{port}/api/v10",
        ARTICLEBOT_DISCORD_GATEWAY=f"ws://127.0.0.1:{port}/gateway",
        ARTICLEBOT_METRICS_ADDRESS=f"127.0.0.1:{metrics_port}",
        HF_HUB_OFFLINE="1",
    )
    log = tmp_path / "bot.log"
    with log.open("wb") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", cwd=tmp_path, env=env, stdout=out, stderr=out
        )
    tokens = (f"token-{n}" for n in count())
    loop = asyncio.get_running_loop()

    async def ask() -> tuple[str, float]:
        token = next(tokens)
        snowflake = discord.utils.time_snowflake(datetime.now(UTC))
        options = [{"name": "question", "type": 3, "value": QUESTION}]
        started = time.perf_counter()
        pushed = interaction(fake.command_id("ask"), "ask", options, snowflake, token)
        await fake.push_interaction(pushed)
        await until(fake, [process], lambda r: said(r, token) is not None, ANSWER_DEADLINE, [log])
        return str(said(fake.requests, token)), time.perf_counter() - started

    async def health(http: aiohttp.ClientSession) -> tuple[int, str]:
        async with http.get("/healthz") as response:
            return response.status, await response.text()

    try:
        await until(fake, [process], lambda _: fake.identified.is_set(), START_DEADLINE, [log])
        await until(fake, [process], lambda _: fake.synced.is_set(), START_DEADLINE, [log])
        answer, _ = await ask()
        assert "80 million dollars" in answer

        async with aiohttp.ClientSession(f"http://127.0.0.1:{metrics_port}") as http:
            await loop.run_in_executor(None, server.stop)
            during, waited = await ask()
            assert waited <= WAIT_TIMEOUT_S + 4, waited
            assert during.endswith("try again in a minute."), during
            assert "80 million" not in during and ":***@" in during
            status, reasons = await health(http)
            assert status == 503 and "the store" in reasons, reasons

            await loop.run_in_executor(None, server.start)
            # The claim on the shards, which the restart ended, is taken again within seconds;
            # until then the bot answers nothing (tests/storage/test_shard_claims.py).
            for _ in range(100):
                status, reasons = await health(http)
                if "the claim on" not in reasons:
                    break
                await asyncio.sleep(0.1)
            assert "the claim on" not in reasons, reasons
            after, waited = await ask()
            assert "80 million dollars" in after, after
            for _ in range(20):  # the gateway and model were fine throughout; the store is back
                status, reasons = await health(http)
                if status == 200:
                    break
                await asyncio.sleep(0.5)
            assert (status, reasons) == (200, f"ok\narticlebot {version()}\n")
        # Each answer opens its thread (the error does not): let the second one be opened.
        threads = lambda r: sum(x.path.endswith("/threads") for x in r) == 2  # noqa: E731
        await until(fake, [process], threads, ANSWER_DEADLINE, [log])
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), timeout=60) == 0
        output = log.read_text()
        assert "Traceback" not in output, output[-4000:]
        assert "The claim on all shards is lost" in output
        assert "Took the claim on all shards again." in output
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await fake.close()
        await runner.cleanup()
        server.close()
