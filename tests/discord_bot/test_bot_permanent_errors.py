"""Errors no restart mends stop `python -m bot` for good, saying so once: exit code 2, which
articlebot.service's RestartPreventExitStatus= names; or, with ARTICLEBOT_ON_PERMANENT_ERROR=wait
(compose.yaml's setting: compose restarts every exit, whatever its code), one sentence and then
nothing more until it is stopped. A database that is not UTF-8 is one of them: it is not waited
for as a database that is starting would be (two minutes, a line every 3 s).

Each is the installed program in a process of its own, as a service manager starts it; a bot
that got as far as Discord would meet an address where nothing listens and say "Cannot reach
Discord", which none of them may.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from postgres_server import PostgresServer

from bot.__main__ import CONFIGURATION_ERROR, WAITING

SHARDS_WITHOUT_COUNT = "ARTICLEBOT_SHARD_IDS needs ARTICLEBOT_SHARD_COUNT"


def bot_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "ARTICLEBOT_"))}
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    return env | {
        "DISCORD_TOKEN": "not-a-real-token",
        "ARTICLEBOT_DATA_DIR": str(tmp_path / "data"),
        "ARTICLEBOT_DISCORD_API_BASE": f"http://127.0.0.1:{port}/api/v10",
        "HF_HUB_OFFLINE": "1",
        **settings,
    }


def lines_of(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


@pytest.mark.slow  # starts a process of its own
def test_a_setting_that_does_not_parse_ends_the_bot_with_code_2_and_one_sentence(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=bot_env(tmp_path, ARTICLEBOT_SHARD_IDS="0-3"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == CONFIGURATION_ERROR, done.stderr
    assert lines_of(done.stderr) == [
        "ARTICLEBOT_SHARD_IDS needs ARTICLEBOT_SHARD_COUNT, the total over all processes."
    ]


@pytest.mark.slow  # waits to see that nothing more happens
def test_with_wait_it_says_so_once_and_waits_to_be_stopped(tmp_path: Path) -> None:
    # From .env, as an operator would set it, beside the setting that does not parse.
    (tmp_path / ".env").write_text("ARTICLEBOT_ON_PERMANENT_ERROR=wait\n")
    process = subprocess.Popen(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=bot_env(tmp_path, ARTICLEBOT_SHARD_IDS="0-3"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith(SHARDS_WITHOUT_COUNT), first
        assert process.stderr.readline().strip() == WAITING
        time.sleep(5)
        assert process.poll() is None, "it exited, to be restarted into the same error"
        process.send_signal(signal.SIGTERM)
        out, rest = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == CONFIGURATION_ERROR
    assert lines_of(out + rest) == [], "nothing more was said while it waited"


@pytest.mark.slow  # a PostgreSQL server
def test_a_database_that_is_not_utf8_stops_the_bot_at_once(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    with psycopg.connect(postgres.url, autocommit=True) as db:
        db.execute(
            "CREATE DATABASE bot_ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' "
            "TEMPLATE template0"
        )
    url = str(postgres._server.get_uri("bot_ascii"))
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=bot_env(tmp_path, ARTICLEBOT_DATABASE_URL=url),
        capture_output=True,
        text=True,
        timeout=300,
    )
    seconds = time.monotonic() - started
    assert done.returncode == CONFIGURATION_ERROR, done.stderr
    said = lines_of(done.stderr)
    assert sum("SQL_ASCII" in line for line in said) == 1, said
    assert not any("Waiting for the database" in line for line in said), said
    assert "Cannot reach Discord" not in done.stderr and "Traceback" not in done.stderr
    assert seconds < 60, f"{seconds:.0f} s: the database was waited for"
