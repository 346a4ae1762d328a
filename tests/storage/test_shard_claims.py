"""One bot process per range of shards, on a data folder and on a PostgreSQL database shared by
several machines: a second process for a shard that another serves stops in one sentence that
names the first (host and pid), a process for other shards starts, and a restart after the
first was killed (`kill -9`, as a crash) is not blocked. Beside a running process, one with
another shard count or of another release is refused too, also when they start at once.

PostgreSQL's claim is kept while the process runs: after the server restarts, or the claim's
session is ended, the same process holds it again within seconds; an idle timeout does not end
it; and once another process took the shards meanwhile, the first learns that it must stop.

The first process is a real one (a child holding the claim, as the bot does while it runs);
the bot's own start is checked too: it refuses before it ever contacts Discord, and a range
past its open-file limit stops it with one sentence, as a setting does.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import psycopg
import pytest
from drills.pg_restart import RestartableServer
from psycopg import sql

from bot.__main__ import CONFIGURATION_ERROR
from index.errors import ConfigurationError
from index.storage.claims import AlreadyServed, Claim, ClaimConflict, served_by_folder
from index.storage.postgres.claims import RETAKE_S, DatabaseClaim, served_by_database

pytestmark = pytest.mark.slow  # each test starts the process that holds the claim

HOLDER = """
import sys, time, json
from pathlib import Path
import index.storage.claims
where, count, shards, release, at = sys.argv[1], *json.loads(sys.argv[2])
if release:  # a process of another release
    index.storage.claims.version = lambda: release
time.sleep(max(0.0, at - time.time()))  # processes started together claim at one moment
if where.startswith("postgresql://"):
    from index.storage.postgres.claims import served_by_database as served
else:
    from index.storage.claims import served_by_folder as served
    where = Path(where)
try:
    with served(where, count, shards):
        print("held", flush=True)
        time.sleep(600)
except index.storage.claims.ConfigurationError as error:
    print("refused", error, flush=True)
"""

# The second key of a claim's advisory locks in PostgreSQL, as releases before the releases'
# own locks took them: 0 for the whole, 1 + shard (index/storage/postgres/claims.py).
NAMESPACE = 0x41424F54

Hold = Callable[..., subprocess.Popen[str]]


@pytest.fixture(params=["data folder", "database"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "database":
        return str(request.getfixturevalue("database_url"))
    return str(tmp_path / "data")


def claim(
    where: str, count: int | None, shards: Sequence[int] | None
) -> AbstractContextManager[Claim]:
    if where.startswith("postgresql://"):
        return served_by_database(where, count, shards)
    return served_by_folder(Path(where), count, shards)


def start_holder(
    where: str,
    count: int | None,
    shards: Sequence[int] | None,
    release: str | None = None,
    at: float = 0.0,
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(HOLDER),
            where,
            json.dumps([count, shards, release, at]),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def hold() -> Iterator[Hold]:
    started: list[subprocess.Popen[str]] = []

    def start(
        where: str, count: int | None, shards: Sequence[int] | None, release: str | None = None
    ) -> subprocess.Popen[str]:
        process = start_holder(where, count, shards, release)
        started.append(process)
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "held", process.stderr.read()  # type: ignore[union-attr]
        return process

    yield start
    for process in started:
        process.kill()
        process.wait()


def refused(
    where: str,
    count: int | None,
    shards: Sequence[int] | None,
    kind: type[ConfigurationError] = AlreadyServed,
) -> str:
    with pytest.raises(kind) as error, claim(where, count, shards):
        pass
    return str(error.value)


def until(condition: Callable[[], object], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_second_process_for_the_same_shards_is_refused_naming_the_first(
    where: str, hold: Hold
) -> None:
    first = hold(where, 8, [0, 1, 2, 3])
    for count, shards in ((8, [2]), (8, [3, 4]), (None, None)):
        message = refused(where, count, shards)
        mine = f"host {socket.gethostname()}, pid {first.pid}, serving shards 0-3 of 8"
        assert mine in message
        assert message.count(".") == 1 and message.endswith("ARTICLEBOT_SHARD_IDS.")
    with claim(where, 8, [4, 5, 6, 7]):  # another range starts beside it
        pass


def test_a_process_of_every_shard_refuses_any_other(where: str, hold: Hold) -> None:
    first = hold(where, None, None)
    for count, shards in ((2, [0]), (None, None), (4, None)):
        assert f"pid {first.pid}, serving all shards" in refused(where, count, shards)


def test_another_shard_count_is_refused_though_its_shard_numbers_are_free(
    where: str, hold: Hold
) -> None:
    # Shard 2 of 4 is a part of shard 0 of 2's servers.
    first = hold(where, 2, [0])
    message = refused(where, 4, [2], ClaimConflict)
    assert "ARTICLEBOT_SHARD_COUNT=2" in message and "ARTICLEBOT_SHARD_COUNT=4" in message
    assert message.count(".") == 1 and message.endswith("or stop that one first.")
    if where.startswith("postgresql://"):  # the database names its sessions
        assert f"pid {first.pid}, serving shard 0 of 2" in message
    refused(where, 4, [1], ClaimConflict)
    refused(where, 4, None, ClaimConflict)
    with claim(where, 2, [1]):  # the same count starts beside it
        pass


def test_another_release_is_refused(where: str, hold: Hold) -> None:
    first = hold(where, 2, [0], release="0.9.0")
    message = refused(where, 2, [1], ClaimConflict)
    assert "must not serve beside it" in message and "Upgrading" in message
    if where.startswith("postgresql://"):
        assert f"pid {first.pid}, serving shard 0 of 2" in message
    else:  # the data folder names the release, from its lock's name
        assert "with release 0.9.0" in message
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    until(lambda: _claims(where, 2, [1]), 10, "the release's lock was not freed")


def test_a_claim_of_a_release_before_release_locks_is_refused(database_url: str) -> None:
    # As such a release holds shard 5 of 8: the whole lock shared and the shard's own.
    with psycopg.connect(database_url, autocommit=True, application_name="articlebot old") as db:
        db.execute("SELECT pg_advisory_lock_shared(%s, 0)", (NAMESPACE,))
        db.execute("SELECT pg_advisory_lock(%s, 6)", (NAMESPACE,))
        message = refused(database_url, 8, [0], ClaimConflict)
        assert message.startswith("Another articlebot process (old) serves the database")
        assert "with another release" in message


def test_of_processes_started_at_once_with_two_counts_only_one_count_serves(
    where: str,
) -> None:
    wanted = [(2, [0]), (4, [1]), (2, [1]), (4, [3]), (4, [2]), (2, None)]
    at = time.time() + 8  # all imported by then, on a slow machine
    processes = [start_holder(where, count, shards, at=at) for count, shards in wanted]
    try:
        said = [p.stdout.readline().strip() for p in processes]  # type: ignore[union-attr]
    finally:
        for process in processes:
            process.kill()
            process.wait()
    held = [wanted[i][0] for i, line in enumerate(said) if line == "held"]
    assert held and len(set(held)) == 1, said
    assert all(line == "held" or line.startswith("refused Another") for line in said), said


def _claims(where: str, count: int, shards: list[int]) -> bool:
    try:
        with claim(where, count, shards):
            return True
    except ConfigurationError:
        return False


def test_a_restart_after_a_crash_is_not_blocked(where: str, hold: Hold) -> None:
    first = hold(where, 2, [0, 1])
    refused(where, 2, [1])
    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    # The kernel frees a file lock at once; PostgreSQL ends the dead client's session as soon
    # as it sees the connection closed.
    until(lambda: _claims(where, 2, [0, 1]), 10, "the crashed process's claim was not freed")


def test_the_bot_refuses_before_it_contacts_discord(tmp_path: Path, hold: Hold) -> None:
    data = tmp_path / "data"
    first = hold(str(data), None, None)
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


def test_a_range_past_the_open_file_limit_stops_the_bot_in_one_sentence(tmp_path: Path) -> None:
    import resource

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "ARTICLEBOT_"))}
    env |= {
        "DISCORD_TOKEN": "not-a-real-token",
        "ARTICLEBOT_DATA_DIR": str(tmp_path / "data"),
        "ARTICLEBOT_SHARD_COUNT": "3000",
        "ARTICLEBOT_SHARD_IDS": "0-2999",  # a lock file each, in the data folder
        "ARTICLEBOT_DISCORD_API_BASE": "http://127.0.0.1:9/api/v10",
    }
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    done = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (512, hard)),
    )
    assert done.returncode == CONFIGURATION_ERROR, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last == (
        "Serving shards 0-2999 of 3000 takes an open file for each shard, more than this "
        "process may open (512); raise its limit (LimitNOFILE= in articlebot.service, ulimit -n "
        "in a shell) or give each process fewer shards with ARTICLEBOT_SHARD_IDS."
    )
    assert "Traceback" not in done.stderr + done.stdout


# PostgreSQL's claim, kept while the process runs.


def claim_session(url: str, key: int) -> int | None:
    """The server process of the session holding the claim lock `key` (1 + shard), if any."""
    with psycopg.connect(url, autocommit=True) as db:
        row = db.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 "
            "AND classid = %s::oid AND objid = %s::oid "
            "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            (NAMESPACE, key),
        ).fetchone()
    return int(row[0]) if row else None


def end_session(url: str, pid: int | None) -> None:
    assert pid is not None
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SELECT pg_terminate_backend(%s)", (pid,))


def problem(claim: Claim) -> str:
    return claim.problem() or ""


@pytest.fixture
def claim_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger="index.storage.postgres.claims")
    return caplog


def test_the_claim_is_taken_again_after_the_database_restarts(
    claim_log: pytest.LogCaptureFixture,
) -> None:
    server = RestartableServer()
    try:
        with served_by_database(server.database_url, 2, [0]) as kept:
            assert kept.problem() is None
            server.stop()  # pg_ctl stop -m fast: the sessions end, their locks with them
            until(lambda: kept.problem() is not None, 10, "the lost claim was not noticed")
            assert "the database postgresql://postgres:***@/drill" in problem(kept)
            time.sleep(2 * RETAKE_S)  # tries to take it again meanwhile, in vain
            assert kept.problem() is not None
            server.start()
            until(lambda: kept.problem() is None, 10, "the claim was not taken again")
            # Held again, by this process: a second one for the shard is refused.
            message = refused(server.database_url, 2, [0])
            assert f"pid {os.getpid()}, serving shard 0 of 2" in message
            assert kept.taken_over() is None
    finally:
        server.close()
    assert "The claim on shard 0 of 2 is lost: its connection to the database" in claim_log.text
    assert "this process answers nothing until it takes it again." in claim_log.text
    assert "Took the claim on shard 0 of 2 again." in claim_log.text


def test_the_claim_is_taken_again_after_its_session_is_ended(
    database_url: str, claim_log: pytest.LogCaptureFixture
) -> None:
    with served_by_database(database_url, 2, [0, 1]) as kept:
        before = claim_session(database_url, 1)
        end_session(database_url, before)
        until(
            lambda: claim_session(database_url, 1) not in (None, before) and not kept.problem(),
            10,
            "the claim was not taken again in a new session",
        )
        refused(database_url, 2, [1])
    assert "(terminating connection due to administrator command)" in claim_log.text
    assert "Took the claim on shards 0-1 of 2 again." in claim_log.text


def test_an_idle_timeout_does_not_end_the_claim(
    database_url: str, claim_log: pytest.LogCaptureFixture
) -> None:
    with psycopg.connect(database_url, autocommit=True) as db:
        name = sql.Identifier(str(db.execute("SELECT current_database()").fetchone()[0]))  # type: ignore[index]
        db.execute(sql.SQL("ALTER DATABASE {} SET idle_session_timeout = '1s'").format(name))
    with psycopg.connect(database_url, autocommit=True) as idle:  # what it does to others
        time.sleep(1.5)
        with pytest.raises(psycopg.OperationalError):
            idle.execute("SELECT 1")
    with served_by_database(database_url, 2, [0]) as kept:
        before = claim_session(database_url, 1)
        time.sleep(5)  # five idle timeouts, one check or two
        assert kept.problem() is None and claim_session(database_url, 1) == before
        # TCP keepalives both ways (a Unix socket has none; the settings still stand).
        assert isinstance(kept, DatabaseClaim) and kept._db is not None
        assert kept._db.info.get_parameters()["keepalives_idle"] == "5"
        assert kept._db.execute("SHOW idle_session_timeout").fetchone() == ("0",)
        assert kept._db.execute("SHOW tcp_keepalives_idle").fetchone() is not None
    assert "is lost" not in claim_log.text


def test_a_claim_that_another_process_took_meanwhile_is_not_taken_back(
    database_url: str, hold: Hold
) -> None:
    role = f"claimer_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(database_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        mine = database_url.replace("postgresql://postgres:", f"postgresql://{role}:", 1)
        with served_by_database(mine, 2, [0, 1]) as kept:
            # Its session ends, and a new one is refused for a while (a network down).
            admin.execute(f"ALTER ROLE {role} NOLOGIN")
            end_session(database_url, claim_session(database_url, 1))
            until(lambda: "not answering" in problem(kept), 10, "the lost claim was not noticed")
            assert "is not permitted to log in" in problem(kept)
            other = hold(database_url, 2, [1])  # meanwhile another process takes shard 1
            admin.execute(f"ALTER ROLE {role} LOGIN")
            until(lambda: kept.taken_over() is not None, 10, "the take-over was not noticed")
            taken = kept.taken_over()
            assert isinstance(taken, AlreadyServed)
            assert str(taken) == (
                "While this process had lost its claim on shards 0-1 of 2, another articlebot "
                f"process (host {socket.gethostname()}, pid {other.pid}, serving shard 1 of 2) "
                f"already answers for the database {mine.replace(':@', ':***@')}, and this "
                "one was asked to serve shards 0-1 of 2; stop that one first, or give each "
                "process shards of its own with ARTICLEBOT_SHARD_IDS."
            )
            assert kept.problem() is not None  # and stays so: it serves nothing
            time.sleep(2 * RETAKE_S)
            assert claim_session(database_url, 1) is None  # shard 0: nobody took it back
        admin.execute(f"DROP ROLE {role}")
