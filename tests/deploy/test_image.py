"""The image as an operator runs it (README's and docs/install.md's commands): the command line
adds through standard input into a volume and a second container answers from it with a
citation, with no export at run time; the bot stops in a sentence on a token it cannot use; the
health check reports the bot's health; the image holds torch's CPU build and runs as a user
other than root; `docker run --env-file .env`, with `.env` made as the docs say (a copy of
`.env.example`, the token filled in), keeps the image's data folder, model cache and health
address. The image's labels name its release, licence and title; the containers that add,
answer and report the bot healthy are confined as compose.yaml confines the bot (a read-only
root, a tmpfs /tmp, no capability, no new privileges, its memory limit).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from containers import ROOT, Engine, hardening, project_version, unique

pytestmark = pytest.mark.slow  # a container engine, an image build

DEMO = ROOT / "index" / "demo" / "tool-library.md"
QUESTION = "How much did the council approve for the renovation?"


@pytest.fixture
def volume(engine: Engine) -> Iterator[str]:
    name = unique("articlebot-test-data")
    engine("volume", "create", name)
    yield name
    engine("volume", "rm", "-f", name, check=False)


@pytest.fixture
def dot_env(tmp_path: Path) -> Path:
    """The operator's `.env`: `cp .env.example .env`, then DISCORD_TOKEN set, nothing else."""
    text = (ROOT / ".env.example").read_text()
    assert "\nDISCORD_TOKEN=\n" in text
    path = tmp_path / ".env"
    path.write_text(text.replace("\nDISCORD_TOKEN=\n", "\nDISCORD_TOKEN=not-a-token\n"))
    return path


def isolated(engine: Engine) -> list[str]:
    """The engine's run arguments on a network of the container's own, with nothing on it:
    what listens on the host's loopback (the host network's) cannot answer for the container."""
    args, skip = [], False
    for arg in engine.run_args:
        if skip or arg == "--network" or arg.startswith("--network="):
            skip = arg == "--network"
            continue
        args.append(arg)
    return [*args, "--network", "none"]


def run(engine: Engine, *args: str, **kwargs: object) -> tuple[int, str, float]:
    started = time.perf_counter()
    done = engine("run", "--rm", "-i", *engine.run_args, *args, check=False, **kwargs)  # type: ignore[arg-type]
    return done.returncode, done.stdout + done.stderr, time.perf_counter() - started


def test_the_image_is_cpu_only_runs_as_a_user_and_checks_its_health(
    engine: Engine, image: str
) -> None:
    inspected = json.loads(engine("image", "inspect", image).stdout)[0]
    config = inspected.get("Config", {})
    # docker keeps it in Config, podman at the top level
    health = config.get("Healthcheck") or inspected.get("Healthcheck")
    assert health and "bot.healthcheck" in " ".join(health["Test"])
    assert config.get("User") not in (None, "", "root", "0")
    print(f"\nimage size: {inspected['Size'] / 1e9:.2f} GB")

    code, out, _ = run(
        engine,
        image,
        "sh",
        "-c",
        "id -u; python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'; "
        "pip list 2>/dev/null | grep -ci '^nvidia-' || true",
    )
    lines = [line for line in out.splitlines() if not line.startswith("time=")]
    assert code == 0, out
    assert lines[0] != "0", "the container runs as root"
    assert lines[1] == "2.13.0+cpu None", lines
    assert lines[2] == "0", "an nvidia package is installed"


def test_version_and_labels(engine: Engine, image: str) -> None:
    code, out, _ = run(engine, image, "articlebot", "--version")
    assert code == 0 and f"articlebot {project_version()}" in out, out
    labels = json.loads(engine("image", "inspect", image).stdout)[0]["Config"]["Labels"]
    assert labels["org.opencontainers.image.version"] == project_version(), labels
    assert labels["org.opencontainers.image.title"] == "articlebot"
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    assert "org.opencontainers.image.source" in labels


def test_add_from_stdin_then_a_second_container_answers(
    engine: Engine, image: str, volume: str
) -> None:
    mount = ["-v", f"{volume}:/data", *hardening()]
    code, out, _ = run(engine, *mount, image, "articlebot", "add", "-", input=DEMO.read_text())
    assert code == 0 and "Added" in out, out
    code, out, seconds = run(engine, *mount, image, "articlebot", "ask", QUESTION, "--json")
    assert code == 0, out
    answer = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    print(f"\nfirst answer of a new container: {seconds:.1f} s")
    assert not answer["abstained"] and "[1]" in answer["answer"]
    assert "$18,000" in answer["citations"][0]["quote"]
    assert "Exporting" not in out, "the model was exported at run time, not in the image"


SETTINGS = (
    "from bot.config import BotSettings; s = BotSettings.from_env(); "
    "print(s.core.data_dir, s.core.model_cache, s.metrics_address)"
)


def test_the_dot_env_the_docs_make_keeps_the_images_settings(
    engine: Engine, image: str, volume: str, dot_env: Path
) -> None:
    """The issue's three: the data folder (`data` made the command line fail to create it),
    the model cache (the model built into the image was passed over) and the health address
    (empty, so the health check could never pass)."""

    def in_container(*args: str, **kwargs: object) -> tuple[int, str]:
        done = engine(
            "run", "--rm", "-i", *isolated(engine), "--env-file", str(dot_env),
            "-v", f"{volume}:/data", image, *args, check=False, **kwargs,  # type: ignore[arg-type]
        )  # fmt: skip
        said = (done.stdout + done.stderr).splitlines()
        # podman's own lines (`time="..." level=...`) are not the container's
        return done.returncode, "\n".join(line for line in said if not line.startswith("time="))

    code, out = in_container("python3", "-c", SETTINGS)
    assert code == 0 and out.splitlines()[-1] == "/data /opt/articlebot/models ('127.0.0.1', 8080)"
    code, out = in_container("articlebot", "add", "-", input=DEMO.read_text())
    assert code == 0 and "Added" in out, out
    code, out = in_container("articlebot", "ask", QUESTION, "--json")
    assert code == 0 and "Exporting" not in out, out
    answer = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    assert "$18,000" in answer["citations"][0]["quote"]
    # Nothing listens on the container's own loopback: the check asks the image's address.
    code, out = in_container("python3", "-m", "bot.healthcheck")
    assert code == 1 and "does not answer on http://127.0.0.1:8080/healthz" in out, out


def test_an_error_no_restart_mends_is_said_once_under_a_restart_policy(
    engine: Engine, image: str, volume: str, dot_env: Path, tmp_path: Path
) -> None:
    """compose's `restart: unless-stopped` restarts every exit, whatever its code; with the
    setting compose.yaml gives the bot, a setting that does not parse is said once and the
    container stays up, serving nothing, rather than restarting into it."""
    bad = tmp_path / "bad.env"
    bad.write_text(dot_env.read_text() + "ARTICLEBOT_SHARD_IDS=0-3\n")  # needs a shard count
    name = unique("articlebot-test-permanent")
    try:
        engine(
            "run", "-d", "--name", name, *isolated(engine), "--restart", "unless-stopped",
            "--env-file", str(bad), "-e", "ARTICLEBOT_ON_PERMANENT_ERROR=wait",
            "-v", f"{volume}:/data", image,
        )  # fmt: skip
        # Until the bot says it waits (the second line), then long enough for an exit to have
        # been restarted into: a restart policy starts the container again within a second.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            logs = engine("logs", name)
            if len([x for x in (logs.stdout + logs.stderr).splitlines() if x.strip()]) >= 2:
                break
            time.sleep(0.5)
        time.sleep(5)
        state = json.loads(engine("inspect", name).stdout)[0]
        logs = engine("logs", name)
    finally:
        engine("rm", "-f", name, check=False)
    said = [line for line in (logs.stdout + logs.stderr).splitlines() if line.strip()]
    assert state["State"]["Running"] and state.get("RestartCount", 0) == 0, (state, said)
    assert sum("ARTICLEBOT_SHARD_IDS needs ARTICLEBOT_SHARD_COUNT" in line for line in said) == 1
    assert len(said) == 2, said  # the sentence, and that the bot waits


def test_the_bot_with_a_token_it_cannot_use_stops_in_a_sentence(
    engine: Engine, image: str, volume: str
) -> None:
    code, out, _ = run(engine, "-v", f"{volume}:/data", "-e", "DISCORD_TOKEN=not-a-token", image)
    lines = [line for line in out.splitlines() if line and not line.startswith("time=")]
    assert code != 0
    assert "Traceback" not in out
    assert len(lines) <= 6, out
    assert any("Discord" in line for line in lines), out


def test_the_health_check_reports_the_bot_connected(
    engine: Engine, image: str, volume: str, dot_env: Path
) -> None:
    from fake_discord import FakeDiscord

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        health_port = probe.getsockname()[1]
    name = unique("articlebot-test-bot")

    async def scenario() -> list[tuple[int, str]]:
        fake = FakeDiscord()
        runner, port = await fake.start()
        # The fake listens on this machine's loopback, which only a container on the host's
        # network reaches (podman-here.sh's run arguments already say so; a plain engine's
        # do not).
        host_network = [] if "--network" in engine.run_args else ["--network", "host"]
        said: list[tuple[int, str]] = []
        try:
            engine(
                "run", "-d", "--name", name, *engine.run_args, *host_network, *hardening(),
                "-v", f"{volume}:/data", "--env-file", str(dot_env),
                # -e wins over --env-file: the fake's token and addresses, and a free port on
                # the host's network (the image's 8080 there may be anyone's).
                "-e", "DISCORD_TOKEN=fake-token",
                "-e", f"ARTICLEBOT_DISCORD_API_BASE=http://127.0.0.1:{port}/api/v10",
                "-e", f"ARTICLEBOT_DISCORD_GATEWAY=ws://127.0.0.1:{port}/gateway",
                "-e", f"ARTICLEBOT_METRICS_ADDRESS=127.0.0.1:{health_port}",
                image,
            )  # fmt: skip
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                done = await asyncio.to_thread(
                    engine, "exec", name, "python3", "-m", "bot.healthcheck", check=False
                )
                said.append((done.returncode, done.stdout.strip()))
                if done.returncode == 0:
                    break
                await asyncio.sleep(1)
        finally:
            await fake.close()
            await runner.cleanup()
        return said

    try:
        said = asyncio.run(scenario())
    finally:
        logs = engine("logs", name, check=False)
        engine("rm", "-f", name, check=False)
    assert said and said[-1][0] == 0, (said[-5:], logs.stdout[-2000:], logs.stderr[-2000:])
    release = f"articlebot {project_version()}"
    assert said[-1][1].splitlines() == ["ok", release]
    first = next(line for line in (logs.stderr + logs.stdout).splitlines() if line.strip())
    assert first.endswith(f"{release} starting"), first
