"""compose.yaml brought up as an operator does (`cp .env.example .env`, set the token and the
database password, `compose up -d`): the bot's service adds an article through standard input
and answers from PostgreSQL with pgvector, confined as the compose file says (a read-only root,
no capability, no new privileges, its memory limit); after `down` and `up` the article is still
there. compose.sqlite.yaml's bot adds and answers from its volume alone, confined alike.

The images are the tests' own, handed to compose in the variables an operator may set
(ARTICLEBOT_IMAGE, ARTICLEBOT_POSTGRES_IMAGE), never under compose's default names: the bot's
is the one the image tests build, PostgreSQL's a stand-in made for the test from Debian's
PostgreSQL and the vendored pgvector (tests/deploy/postgres_image), since no registry can be
reached here, and removed when the tests end. Needs podman with podman-compose, or docker with
its compose plugin.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from containers import ROOT, Engine, unique

pytestmark = pytest.mark.slow  # a container engine, two images, a database

DEMO = ROOT / "index" / "demo" / "tool-library.md"
QUESTION = "How much did the council approve for the renovation?"
SETTINGS = (
    "from bot.config import BotSettings; s = BotSettings.from_env(); "
    "print(s.core.data_dir, s.core.model_cache, s.metrics_address)"
)
# What a container of the bot's service may do, in the kernel's words: its privileges and
# capabilities, the root file system's mount options, whether /tmp and /data take a file, and
# its memory limit (cgroup v2, else v1).
CONFINEMENT = (
    "grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status; "
    'awk \'$5 == "/" {print "root " $6}\' /proc/self/mountinfo; '
    "touch /tmp/probe /data/probe && rm /tmp/probe /data/probe && echo writable; "
    "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes"
)


def compose_command(engine: Engine) -> list[str]:
    if engine.exe == "docker":
        return ["docker", "compose"]
    if shutil.which("podman-compose") is None:
        pytest.skip("podman works here but podman-compose is not installed (apt install it)")
    return ["podman-compose"]


@pytest.fixture
def operator(
    engine: Engine, image: str, postgres_image: str, tmp_path: Path
) -> Iterator[Callable[[str], Callable[..., str]]]:
    """A function that puts a compose file, as shipped, in a folder with an operator's .env,
    and returns a function that runs `compose ARGS` there and returns its output."""
    made: list[tuple[list[str], Path, str]] = []

    def project(compose_file: str) -> Callable[..., str]:
        return _project(engine, image, postgres_image, tmp_path, compose_file, made)

    try:
        yield project
    finally:
        for base, folder, name in made:
            subprocess.run([*base, "down", "-v"], cwd=folder, capture_output=True, timeout=300)
            # podman-compose 1.0.3's `down` leaves the project's network behind
            for kind in ("volume", "network"):
                for made_here in engine(kind, "ls", "--format", "{{.Name}}").stdout.split():
                    if made_here.startswith(name):
                        engine(kind, "rm", made_here, check=False)


def _project(
    engine: Engine,
    image: str,
    postgres_image: str,
    tmp_path: Path,
    compose_file: str,
    made: list[tuple[list[str], Path, str]],
) -> Callable[..., str]:
    folder = tmp_path / compose_file.replace(".", "-")
    folder.mkdir()
    shutil.copy(ROOT / compose_file, folder / compose_file)
    env = (ROOT / ".env.example").read_text()
    env = env.replace("DISCORD_TOKEN=\n", "DISCORD_TOKEN=not-a-token\n")
    env = env.replace("POSTGRES_PASSWORD=\n", f"POSTGRES_PASSWORD={secrets.token_hex(16)}\n")
    assert "POSTGRES_PASSWORD=\n" not in env
    (folder / ".env").write_text(env)
    name = unique("abtest").replace("-", "")
    base = [*compose_command(engine), "-f", compose_file, "-p", name]
    made.append((base, folder, name))
    # The tests' images, where compose would otherwise use (and build, or pull) its defaults.
    images = {"ARTICLEBOT_IMAGE": image, "ARTICLEBOT_POSTGRES_IMAGE": postgres_image}

    def compose(*args: str, input: str | None = None, timeout: float = 600) -> str:
        done = subprocess.run(
            [*base, *args],
            cwd=folder,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **images},
        )
        assert done.returncode == 0, (
            f"compose {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        return done.stdout + done.stderr

    def database_healthy() -> None:
        # podman runs no health check by itself here (no systemd timers): ask it to, as compose's
        # `depends_on: condition: service_healthy` would wait for.
        deadline = time.monotonic() + 120
        while True:
            names = engine("ps", "--format", "{{.Names}}").stdout.split()
            db = next((n for n in names if n.startswith(name) and "db" in n), None)
            if db and engine("healthcheck", "run", db, check=False).returncode == 0:
                return
            assert time.monotonic() < deadline, f"the database never became healthy: {names}"
            time.sleep(2)

    compose.database_healthy = database_healthy  # type: ignore[attr-defined]
    return compose


def json_in(out: str) -> Any:
    """The command's JSON among podman-compose's own lines (which print its podman calls)."""
    for line in out.splitlines():
        if line.startswith(("[", "{")):
            try:
                return json.loads(line)
            except ValueError:
                continue
    raise AssertionError(f"no JSON in:\n{out[-3000:]}")


def assert_confined(said: str, compose_file: str) -> None:
    """CONFINEMENT's answer (among compose's own lines): what the compose file's bot service
    says it is."""
    status = dict(re.findall(r"^(NoNewPrivs|CapEff|CapBnd):\s*(\S+)$", said, re.MULTILINE))
    assert status == {"NoNewPrivs": "1", "CapEff": "0" * 16, "CapBnd": "0" * 16}, said
    root = re.search(r"^root (\S+)$", said, re.MULTILINE)
    assert root and "ro" in root[1].split(","), said
    assert re.search(r"^writable$", said, re.MULTILINE), said
    limit = str(yaml.safe_load((ROOT / compose_file).read_text())["services"]["bot"]["mem_limit"])
    assert limit.endswith("g"), limit
    assert re.search(rf"^{int(limit[:-1]) * 1024**3}$", said, re.MULTILINE), said


def test_add_and_ask_through_the_bots_service_survive_down_and_up(
    operator: Callable[[str], Callable[..., str]],
) -> None:
    project = operator("compose.yaml")
    project("up", "-d")
    project.database_healthy()  # type: ignore[attr-defined]
    added = project(
        "run", "--rm", "-T", "bot", "articlebot", "add", "-", "--json", input=DEMO.read_text()
    )
    assert json_in(added)["added"] is True

    def ask() -> dict:
        out = project("run", "--rm", "-T", "bot", "articlebot", "ask", QUESTION, "--json")
        assert "Exporting" not in out, "the model built into the image was passed over"
        return dict(json_in(out))

    answer = ask()
    assert not answer["abstained"] and "[1]" in answer["answer"]
    assert "$18,000" in answer["citations"][0]["quote"]

    # The .env made from .env.example leaves the image's own settings in place.
    settings = project("run", "--rm", "-T", "bot", "python3", "-c", SETTINGS)
    assert "/data /opt/articlebot/models ('127.0.0.1', 8080)" in settings, settings
    health = project("run", "--rm", "-T", "bot", "sh", "-c", "python3 -m bot.healthcheck; true")
    # Its answer: nothing on that address in this container, or the bot's 503 where compose
    # runs the services in one pod; never that the address is not set.
    assert "is not set" not in health, health
    assert "http://127.0.0.1:8080/healthz" in health or "articlebot " in health, health
    assert_confined(project("run", "--rm", "-T", "bot", "sh", "-c", CONFINEMENT), "compose.yaml")

    project("down")
    project("up", "-d")
    project.database_healthy()  # type: ignore[attr-defined]
    listed = project("run", "--rm", "-T", "bot", "articlebot", "list", "--json")
    articles = json_in(listed)
    assert len(articles if isinstance(articles, list) else articles["articles"]) == 1
    assert ask()["citations"][0]["quote"] == answer["citations"][0]["quote"]


def test_the_sqlite_compose_files_bot_adds_and_answers_from_its_volume_confined(
    operator: Callable[[str], Callable[..., str]],
) -> None:
    project = operator("compose.sqlite.yaml")
    # A service with nothing to depend on: podman-compose 1.0.3's `run` would build every
    # service of the file first, this one's image too, unless told --no-deps.
    run = ("run", "--rm", "--no-deps", "-T", "bot")
    added = project(*run, "articlebot", "add", "-", "--json", input=DEMO.read_text())
    assert json_in(added)["added"] is True
    out = project(*run, "articlebot", "ask", QUESTION, "--json")
    assert "Exporting" not in out and "$18,000" in json_in(out)["citations"][0]["quote"], out
    assert_confined(project(*run, "sh", "-c", CONFINEMENT), "compose.sqlite.yaml")
