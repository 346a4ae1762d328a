"""`python -m bot.healthcheck`, as a container's HEALTHCHECK runs it every 30 s: it imports the
standard library alone (no discord, FAISS, bm25s, trafilatura or numpy), finds the address in
the settings the bot reads, `.env` in the working folder included, and reports /healthz's
answer; its `.env` reader reads every line as the bot's (python-dotenv) does.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import BotSettings
from bot.healthcheck import read_dotenv, setting
from index.settings import load_dotenv

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"discord", "faiss", "bm25s", "trafilatura", "numpy", "aiohttp", "torch", "index"}
KEY = "ARTICLEBOT_METRICS_ADDRESS"


def healthcheck(cwd: Path, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    """`python -m bot.healthcheck` in `cwd`, as the image runs it, with the checkout importable."""
    env = {**env, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *flags, "-m", "bot.healthcheck"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def without_address() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != KEY}


def imported(stderr: str) -> set[str]:
    """The top-level modules `-X importtime` says a process imported."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name and name != "imported package":
                names.add(name.split(".")[0])
    return names


@pytest.fixture
def health_server() -> Iterator[tuple[int, list[tuple[int, str]]]]:
    """A stand-in for the bot's /healthz on 127.0.0.1: its port, and the answers it gives
    (status, body), the last one repeated."""
    answers = [(200, "ok\narticlebot 9.9.9")]

    class Healthz(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            status, body = answers[-1]
            self.send_response(status if self.path == "/healthz" else 404)
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Healthz)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], answers
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow  # starts a process of its own
def test_the_health_check_imports_nothing_but_the_standard_library(tmp_path: Path) -> None:
    baseline = healthcheck(tmp_path, without_address(), "-X", "importtime")
    env = {**without_address(), KEY: "127.0.0.1:9"}  # nothing listens on port 9
    done = healthcheck(tmp_path, env, "-X", "importtime")
    assert done.returncode == 1 and "does not answer on http://127.0.0.1:9/healthz" in done.stdout
    names = imported(done.stderr)
    assert names and not names & HEAVY, names & HEAVY
    # Beyond what the interpreter imports at start (site's .pth hooks), the standard library and
    # the bot's own package alone.
    extra = names - imported(baseline.stderr)
    assert extra - set(sys.stdlib_module_names) <= {"bot"}, extra - set(sys.stdlib_module_names)


@pytest.mark.slow  # starts a process of its own
def test_the_address_comes_from_dot_env_as_the_bot_reads_it(
    tmp_path: Path,
    health_server: tuple[int, list[tuple[int, str]]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port, answers = health_server
    (tmp_path / ".env").write_text(f"DISCORD_TOKEN=x\n{KEY}=127.0.0.1:{port}  # the bot's\n")
    done = healthcheck(tmp_path, without_address())
    assert (done.returncode, done.stdout.split()) == (0, ["ok", "articlebot", "9.9.9"]), done
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(KEY, raising=False)
    try:
        assert BotSettings.from_env().metrics_address == ("127.0.0.1", port)
    finally:
        os.environ.pop(KEY, None)  # load_dotenv put it there

    answers.append((503, "not connected to Discord's gateway yet\narticlebot 9.9.9"))
    done = healthcheck(tmp_path, without_address())
    assert done.returncode == 1 and done.stdout.startswith("not connected"), done

    # The environment wins over .env, even empty, for the check as for the bot.
    done = healthcheck(tmp_path, {**without_address(), KEY: ""})
    assert done.returncode == 1 and "is not set" in done.stdout, done
    monkeypatch.setenv(KEY, "")
    assert BotSettings.from_env().metrics_address is None

    (tmp_path / ".env").write_text(f"{KEY}=nowhere\n")
    done = healthcheck(tmp_path, without_address())
    assert done.returncode == 1 and "must be host:port" in done.stderr, done


DOTENV = """\
HC_A=1
export HC_B=two words  # a comment
HC_C='single # kept' # a comment
HC_D="double\\nline \\"quoted\\""
'HC_E'=quoted key
HC_F = spaced
HC_G=
HC_H
HC_I="two
lines"
HC_J='a \\'b\\' \\\\ \\n'
HC_K=${HC_A}-${HC_MISSING:-fallback}-${HC_G:-unused}-${HC_FROM_ENV}
HC_L=first
HC_L=second
HC_M='x' junk
HC_N=after the line that does not parse
HC_O=#not a comment
# HC_P=commented out
   HC_Q=indented
HC_R="unclosed
HC_S=after an unclosed quote
"""


def test_the_dot_env_reader_reads_each_line_as_python_dotenv_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text(DOTENV)
    keys = [f"HC_{c}" for c in "ABCDEFGHIJKLMNOPQRS"]
    env = {"HC_FROM_ENV": "from the environment", "HC_A": "kept"}
    ours = {k: setting(k, env, tmp_path) for k in keys}
    assert read_dotenv(tmp_path / ".env", env)["HC_K"] == "kept-fallback--from the environment"

    monkeypatch.chdir(tmp_path)
    for key in keys:
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    try:
        load_dotenv()  # what the bot and the command line run
        theirs = {k: os.environ.get(k, "") for k in keys}
    finally:
        for key in keys:
            os.environ.pop(key, None)
    assert ours == theirs
    assert ours["HC_S"] == "after an unclosed quote" and ours["HC_P"] == ""
