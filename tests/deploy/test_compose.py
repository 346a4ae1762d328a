"""compose.yaml brought up as an operator does (`cp .env.example .env`, set the token and the
database password, `compose up -d`): the bot's service adds an article through standard input
and answers from PostgreSQL with pgvector; after `down` and `up` the article is still there.

Where no registry can be reached, the PostgreSQL image is a stand-in made for the test from
Debian's PostgreSQL and the vendored pgvector (tests/deploy/postgres_image), under the name the
compose file uses, unless that image is already here; the bot's image is the one the image
tests build. Needs podman with podman-compose, or docker with its compose plugin.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from containers import ROOT, Engine, unique

pytestmark = pytest.mark.slow  # a container engine, two images, a database

POSTGRES_IMAGE = "docker.io/pgvector/pgvector:pg16"  # compose.yaml's `pgvector/pgvector:pg16`
DEMO = ROOT / "index" / "demo" / "tool-library.md"
QUESTION = "How much did the council approve for the renovation?"
SETTINGS = (
    "from bot.config import BotSettings; s = BotSettings.from_env(); "
    "print(s.core.data_dir, s.core.model_cache, s.metrics_address)"
)


def compose_command(engine: Engine) -> list[str]:
    if engine.exe == "docker":
        return ["docker", "compose"]
    if shutil.which("podman-compose") is None:
        pytest.skip("podman works here but podman-compose is not installed (apt install it)")
    return ["podman-compose"]


@pytest.fixture
def project(engine: Engine, image: str, tmp_path: Path) -> Iterator[Callable[..., str]]:
    """compose.yaml, as shipped, in a folder with an operator's .env; a function that runs
    `compose ARGS` there and returns its output."""
    if engine("image", "inspect", POSTGRES_IMAGE, check=False).returncode != 0:
        context = tmp_path / "postgres-image"
        shutil.copytree(Path(__file__).parent / "postgres_image", context)
        shutil.copy(
            next((ROOT / "third_party" / "pgvector").glob("*.tar.gz")), context / "pgvector.tar.gz"
        )
        engine("build", *engine.build_args, "-t", POSTGRES_IMAGE, str(context), timeout=1200)
    engine("tag", image, "localhost/articlebot:latest")
    folder = tmp_path / "operator"
    folder.mkdir()
    shutil.copy(ROOT / "compose.yaml", folder / "compose.yaml")
    env = (ROOT / ".env.example").read_text()
    env = env.replace("DISCORD_TOKEN=\n", "DISCORD_TOKEN=not-a-token\n")
    env = env.replace("POSTGRES_PASSWORD=\n", f"POSTGRES_PASSWORD={secrets.token_hex(16)}\n")
    assert "POSTGRES_PASSWORD=\n" not in env
    (folder / ".env").write_text(env)
    name = unique("abtest").replace("-", "")
    base = [*compose_command(engine), "-p", name]

    def compose(*args: str, input: str | None = None, timeout: float = 600) -> str:
        done = subprocess.run(
            [*base, *args], cwd=folder, input=input, capture_output=True, text=True, timeout=timeout
        )
        assert done.returncode == 0, (
            f"compose {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        return done.stdout

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
    try:
        yield compose
    finally:
        subprocess.run([*base, "down", "-v"], cwd=folder, capture_output=True, timeout=300)
        for volume in engine("volume", "ls", "--format", "{{.Name}}").stdout.split():
            if volume.startswith(name):
                engine("volume", "rm", "-f", volume, check=False)


def json_in(out: str) -> Any:
    """The command's JSON among podman-compose's own lines (which print its podman calls)."""
    for line in out.splitlines():
        if line.startswith(("[", "{")):
            try:
                return json.loads(line)
            except ValueError:
                continue
    raise AssertionError(f"no JSON in:\n{out[-3000:]}")


def test_add_and_ask_through_the_bots_service_survive_down_and_up(
    project: Callable[..., str],
) -> None:
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

    project("down")
    project("up", "-d")
    project.database_healthy()  # type: ignore[attr-defined]
    listed = project("run", "--rm", "-T", "bot", "articlebot", "list", "--json")
    articles = json_in(listed)
    assert len(articles if isinstance(articles, list) else articles["articles"]) == 1
    assert ask()["citations"][0]["quote"] == answer["citations"][0]["quote"]
