"""Two bot processes, each running one of two shards, over one PostgreSQL: what several machines
would run. An article added through one process is answered through the other.

Both are `python -m bot` subprocesses with data folders of their own (as on two machines)
against one local fake of Discord (fake_discord.py) and one real PostgreSQL with pgvector.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

import discord
import pytest
from fake_discord import FakeDiscord, Request, interaction, until
from news_site import Site

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]  # real processes on one database

START_DEADLINE = 180  # a cold process on a slow machine, not a timing assertion
ANSWER_DEADLINE = 240


async def test_two_processes_on_two_shards_share_one_database(
    tmp_path: Path, cli_models: Path, database_url: str
) -> None:
    fake = FakeDiscord()
    runner, port = await fake.start()
    processes, logs = [], []
    try:
        with Site.serving() as site:
            for shard in (0, 1):
                data = tmp_path / f"machine-{shard}"
                data.mkdir()
                (data / "models").symlink_to(cli_models, target_is_directory=True)
                env = {
                    k: v
                    for k, v in os.environ.items()
                    if not k.startswith(("DISCORD_", "ARTICLEBOT_"))
                }
                env.update(
                    DISCORD_TOKEN="fake-token",
                    ARTICLEBOT_DATA_DIR=str(data),
                    ARTICLEBOT_DATABASE_URL=database_url,
                    ARTICLEBOT_SHARD_COUNT="2",
                    ARTICLEBOT_SHARD_IDS=str(shard),
                    ARTICLEBOT_DISCORD_API_BASE=f"http://127.0.0.1:{port}/api/v10",
                    ARTICLEBOT_DISCORD_GATEWAY=f"ws://127.0.0.1:{port}/gateway",
                    ARTICLEBOT_ALLOW_PRIVATE_NETWORKS="1",  # the news site is on 127.0.0.1
                    HF_HUB_OFFLINE="1",
                )
                logs.append(tmp_path / f"bot-{shard}.log")
                with logs[-1].open("wb") as out:
                    processes.append(
                        await asyncio.create_subprocess_exec(
                            sys.executable, "-m", "bot", cwd=data, env=env, stdout=out, stderr=out
                        )
                    )

            def both_ready(_: list[Request]) -> bool:
                return set(fake.shards) == {0, 1} and fake.synced.is_set()

            await until(fake, processes, both_ready, START_DEADLINE, logs)

            def replied(token: str, words: str) -> bool:
                return any(
                    f"/{token}" in r.path
                    and r.body
                    and words in str(r.body.get("content")) + str(r.body.get("embeds"))
                    for r in fake.requests
                )

            add = discord.utils.time_snowflake(datetime.now(UTC))
            url = [{"name": "url", "type": 3, "value": f"{site.base}/ferry"}]
            await fake.push_interaction(
                interaction(fake.command_id("add"), "add", url, add, token="add-on-shard-0"),
                shard=0,
            )
            await until(
                fake,
                processes,
                lambda _: replied("add-on-shard-0", "Harbor gets a ferry terminal"),
                ANSWER_DEADLINE,
                logs,
            )

            # Only the second process's connection (shard 1) gets the question.
            ask = discord.utils.time_snowflake(datetime.now(UTC))
            question = [
                {"name": "question", "type": 3, "value": "How much will the terminal cost?"}
            ]
            await fake.push_interaction(
                interaction(fake.command_id("ask"), "ask", question, ask, token="ask-on-shard-1"),
                shard=1,
            )
            await until(
                fake,
                processes,
                lambda _: replied("ask-on-shard-1", "80 million dollars"),
                ANSWER_DEADLINE,
                logs,
            )
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process, log in zip(processes, logs, strict=True):
            code = await asyncio.wait_for(process.wait(), timeout=60)
            assert code == 0, log.read_text()[-4000:]
            assert "Traceback" not in log.read_text(), log.read_text()[-4000:]
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
                await process.wait()
        await fake.close()
        await runner.cleanup()
