"""The bot and the claim on its shards (index/storage/claims.py): while the claim is not held,
another process may be answering the same servers, so the bot answers nothing: a command is
told why in one sentence, a mention gets no reply, and /healthz answers 503 naming the claim.
Once it holds the claim again it answers as before. A bot whose shards another process took
while its claim was lost stops for good, in one sentence, with exit status 2.

Through SimCord first; then as a real process over PostgreSQL, against the local fake of
Discord, whose claim's session is ended while its role may not log in again.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import discord
import psycopg
import pytest
import simcord
from bot_world import Server, last_said
from fake_discord import FakeDiscord, Request, interaction, until

from bot.__main__ import CONFIGURATION_ERROR
from bot.client import NOT_HELD, ArticleBot
from bot.health import problems
from index.storage.claims import Claim

FERRY = (
    "The harbor authority approved a new ferry terminal on Tuesday after a long debate.\n\n"
    "The terminal will cost 80 million dollars and is due to open in the spring of 2027."
)
QUESTION = "How much will the ferry terminal cost?"
LOST = "the database postgresql://bot:***@db/articles is not answering (connection refused)"


class LostClaim(Claim):
    def problem(self) -> str | None:
        return LOST


@pytest.mark.asyncio
@pytest.mark.simcord(settle_timeout=120)
async def test_while_the_claim_is_not_held_the_bot_answers_nothing(
    server: Server, simcord_bot: ArticleBot, simcord_env: simcord.Env
) -> None:
    server.add_text(FERRY, title="Harbor ferry")
    simcord_bot.claim = LostClaim("shards 0-1 of 4")
    me = server.guild.me
    assert me is not None

    refused = await server.member.slash(server.channel, "ask", question=QUESTION)
    assert refused.response is not None and refused.response.ephemeral
    assert refused.response.content == NOT_HELD.format(problem=LOST)
    assert refused.response.content.count(". ") == 0
    assert len(simcord_env.errors) == 1  # the refusal, handled (and acknowledged here)
    asked = await server.member.send(server.channel, f"{me.mention} {QUESTION}")
    last = last_said(server.channel)
    assert last is not None and last.id == asked.id  # no reply: another process may give it
    found = await problems(simcord_bot, server.library, simcord_bot.claim)
    assert f"the claim on shards 0-1 of 4 is not held: {LOST}" in found

    simcord_bot.claim = Claim("shards 0-1 of 4")  # held again
    await server.member.send(server.channel, f"{me.mention} {QUESTION}")
    reply = last_said(server.channel)
    assert reply is not None and reply.author.bot
    assert "80 million dollars" in (reply.embeds[0].description or "")
    assert await problems(simcord_bot, server.library, simcord_bot.claim) == []


OTHER = """
import sys, time
from index.storage.postgres.claims import served_by_database
with served_by_database(sys.argv[1], None, None):
    print("held", flush=True)
    time.sleep(600)
"""
START_DEADLINE = 180  # a cold process on a slow machine, not a timing assertion


def refusal(requests: list[Request], token: str) -> str | None:
    """What the bot answered the interaction with this token at once (its callback's text)."""
    for r in requests:
        if r.path.endswith(f"/{token}/callback") and r.body and r.body.get("type") == 4:
            return str(r.body["data"].get("content"))
    return None


@pytest.mark.asyncio
@pytest.mark.slow
async def test_a_bot_whose_shards_were_taken_while_its_claim_was_lost_stops_for_good(
    tmp_path: Path, cli_models: Path, database_url: str
) -> None:
    role = f"bot_{os.getpid()}_{time.monotonic_ns()}"
    admin = await psycopg.AsyncConnection.connect(database_url, autocommit=True)
    await admin.execute(f"CREATE ROLE {role} SUPERUSER LOGIN")
    url = database_url.replace("postgresql://postgres:", f"postgresql://{role}:", 1)
    data = tmp_path / "data"
    data.mkdir()
    (data / "models").symlink_to(cli_models, target_is_directory=True)
    fake = FakeDiscord()
    runner, port = await fake.start()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        metrics_port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "ARTICLEBOT_"))}
    env.update(
        DISCORD_TOKEN="fake-token",
        ARTICLEBOT_DATA_DIR=str(data),
        ARTICLEBOT_DATABASE_URL=url,
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
    other: subprocess.Popen[str] | None = None
    try:
        await until(fake, [process], lambda _: fake.identified.is_set(), START_DEADLINE, [log])
        await until(fake, [process], lambda _: fake.synced.is_set(), START_DEADLINE, [log])

        # The claim's session ends (all shards: the whole lock, held exclusively), and no new
        # one may log in: a network down, say.
        await admin.execute(f"ALTER ROLE {role} NOLOGIN")
        cursor = await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
            "AND classid = x'41424F54'::bigint::oid AND objid = 0 AND mode = 'ExclusiveLock' "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
        assert await cursor.fetchall() == [(True,)]
        async with aiohttp.ClientSession(f"http://127.0.0.1:{metrics_port}") as http:
            for _ in range(100):
                async with http.get("/healthz") as response:
                    status, body = response.status, await response.text()
                if "the claim on all shards is not held" in body and "log in" in body:
                    break  # lost, and then refused a new session
                await asyncio.sleep(0.1)
        assert status == 503 and "is not permitted to log in" in body, body

        token = "claim-lost"
        snowflake = discord.utils.time_snowflake(datetime.now(UTC))
        options = [{"name": "question", "type": 3, "value": QUESTION}]
        await fake.push_interaction(
            interaction(fake.command_id("ask"), "ask", options, snowflake, token)
        )
        await until(fake, [process], lambda r: refusal(r, token) is not None, 60, [log])
        said = str(refusal(fake.requests, token))
        assert said.startswith("This bot cannot confirm now that it alone answers for this")
        assert said.endswith("; try again in a minute.") and ":***@" in said

        # Meanwhile another process takes every shard; then the first may log in again.
        other = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(OTHER), database_url],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        await admin.execute(f"ALTER ROLE {role} LOGIN")
        assert await asyncio.wait_for(process.wait(), timeout=60) == CONFIGURATION_ERROR
        output = log.read_text()
        assert output.strip().splitlines()[-1] == (
            "While this process had lost its claim on all shards, another articlebot process "
            f"(host {socket.gethostname()}, pid {other.pid}, serving all shards) already "
            f"answers for the database {url.replace(':@', ':***@')}, and this one was asked "
            "to serve all shards; stop that one first, or give each process shards of its own "
            "with ARTICLEBOT_SHARD_IDS."
        ), output[-3000:]
        assert "The claim on all shards is lost" in output
        assert "Traceback" not in output, output[-4000:]
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        if other is not None:
            other.kill()
            other.wait()
        await fake.close()
        await runner.cleanup()
        await admin.close()
