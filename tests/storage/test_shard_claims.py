"""One bot process per range of shards, on a data folder and on a PostgreSQL database shared by
several machines: a second process for a shard that another serves stops in one sentence that
names the first (host and pid), a process for other shards starts, and a restart after the
first was killed (`kill -9`, as a crash) is not blocked.

The first process is a real one (a child holding the claim, as the bot does while it runs);
the bot's own start is checked too: it refuses before it ever contacts Discord.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from bot.__main__ import CONFIGURATION_ERROR
from index.storage.claims import AlreadyServed, served_by_folder

pytestmark = pytest.mark.slow  # each test starts the process that holds the claim

HOLDER = """
import sys, time, json
from pathlib import Path
where, shards = sys.argv[1], json.loads(sys.argv[2])
if where.startswith("postgresql://"):
    from index.storage.postgres.claims import served_by_database as served
else:
    from index.storage.claims import served_by_folder as served
    where = Path(where)
with served(where, shards):
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture(params=["data folder", "database"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "database":
        return str(request.getfixturevalue("database_url"))
    return str(tmp_path / "data")


def claim(where: str, shards: Sequence[int] | None) -> AbstractContextManager[None]:
    if where.startswith("postgresql://"):
        from index.storage.postgres.claims import served_by_database

        return served_by_database(where, shards)
    return served_by_folder(Path(where), shards)


@pytest.fixture
def hold() -> Iterator[object]:
    started: list[subprocess.Popen[str]] = []

    def start(where: str, shards: Sequence[int] | None) -> subprocess.Popen[str]:
        import json

        process = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(HOLDER), where, json.dumps(shards)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "held", process.stderr.read()  # type: ignore[union-attr]
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


def refused(where: str, shards: Sequence[int] | None) -> str:
    with pytest.raises(AlreadyServed) as error, claim(where, shards):
        pass
    return str(error.value)


def test_a_second_process_for_the_same_shards_is_refused_naming_the_first(
    where: str, hold: object
) -> None:
    first = hold(where, [0, 1, 2, 3])  # type: ignore[operator]
    for shards in ([2], [3, 4], None):
        message = refused(where, shards)
        assert f"host {socket.gethostname()}, pid {first.pid}, serving shards 0-3" in message
        assert message.count(".") == 1 and message.endswith("ARTICLEBOT_SHARD_IDS.")
    with claim(where, [4, 5, 6, 7]):  # another range starts beside it
        pass


def test_a_process_of_every_shard_refuses_any_other(where: str, hold: object) -> None:
    first = hold(where, None)  # type: ignore[operator]
    for shards in ([0], None):
        assert f"pid {first.pid}, serving all shards" in refused(where, shards)


def test_a_restart_after_a_crash_is_not_blocked(where: str, hold: object) -> None:
    first = hold(where, [0, 1])  # type: ignore[operator]
    refused(where, [1])
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    # The kernel frees a file lock at once; PostgreSQL ends the dead client's session as soon
    # as it sees the connection closed.
    deadline = time.monotonic() + 10
    while True:
        try:
            with claim(where, [0, 1]):
                break
        except AlreadyServed:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_the_bot_refuses_before_it_contacts_discord(tmp_path: Path, hold: object) -> None:
    data = tmp_path / "data"
    first = hold(str(data), None)  # type: ignore[operator]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "ARTICLEBOT_"))}
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    env |= {
        "DISCORD_TOKEN": "not-a-real-token",
        "ARTICLEBOT_DATA_DIR": str(data),
        # Were it contacted, this fake address would end the bot with "Cannot reach Discord".
        "ARTICLEBOT_DISCORD_API_BASE": f"http://127.0.0.1:{port}/api/v10",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Settings that name served shards: code 2, which no service manager restarts on.
    assert done.returncode == CONFIGURATION_ERROR, done.stderr
    assert f"pid {first.pid}, serving all shards" in done.stderr
    assert "Cannot reach Discord" not in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
