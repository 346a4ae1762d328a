"""A real container engine for the tests of what operators run (the image, compose).

Tests that need one run where podman or docker works (`../shared/tools/podman-here.sh` sets
podman up on a Debian machine without a registry: its PODMAN_BUILD_ARGS and PODMAN_RUN_ARGS,
exported, reach these tests) and are reported as not run, with that reason, where none does.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# Every image the tests make is named under this prefix, never an official name or the tag an
# operator's compose uses (`articlebot:VERSION`, `pgvector/pgvector:pg16`): an operator's
# `compose up` on a machine where the tests ran must find only what the operator made.
TEST_IMAGES = "localhost/articlebot-test"
# What the Dockerfile copies, beside index/ and bot/.
BUILD_FILES = (
    "Dockerfile",
    ".dockerignore",
    "pyproject.toml",
    "constraints.txt",
    "README.md",
    "LICENSE",
)


@dataclass(frozen=True)
class Engine:
    exe: str
    build_args: list[str]
    run_args: list[str]

    def __call__(
        self,
        *args: str,
        input: str | None = None,
        timeout: float = 600,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [self.exe, *args], input=input, capture_output=True, text=True, timeout=timeout
        )
        if check and done.returncode != 0:
            raise AssertionError(
                f"{self.exe} {' '.join(args[:3])}... exited {done.returncode}:\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
            )
        return done


def working_engine() -> tuple[Engine | None, str]:
    tried = []
    for exe in ("podman", "docker"):
        try:
            done = subprocess.run([exe, "info"], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as error:
            tried.append(f"{exe}: {error}")
            continue
        if done.returncode == 0:
            build = shlex.split(os.environ.get("PODMAN_BUILD_ARGS", "")) if exe == "podman" else []
            run = shlex.split(os.environ.get("PODMAN_RUN_ARGS", "")) if exe == "podman" else []
            # podman's OCI format drops HEALTHCHECK; docker's keeps it.
            return Engine(exe, ["--format", "docker", *build] if exe == "podman" else [], run), ""
        tried.append(f"{exe}: {(done.stderr.strip().splitlines() or ['no answer'])[-1]}")
    return None, "; ".join(tried)


def source_hash() -> str:
    """What the image is built from, so that a second run of the tests reuses its image."""
    digest = hashlib.sha256()
    for name in BUILD_FILES:
        digest.update((ROOT / name).read_bytes())
    for folder in ("index", "bot"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + path.read_bytes())
    return digest.hexdigest()[:12]


def keep_images() -> bool:
    """Whether the images the tests build stay when they end (for the next run to reuse)."""
    return os.environ.get("ARTICLEBOT_TEST_KEEP_IMAGES") == "1"


def unique(prefix: str) -> str:
    return f"{prefix}-{os.getpid()}-{time.monotonic_ns() % 10**9}"


def project_version() -> str:
    """The release as pyproject.toml, its one home, writes it."""
    return next(
        line.split("=")[1].strip(' "')
        for line in (ROOT / "pyproject.toml").read_text().splitlines()
        if line.startswith("version")
    )


def hardening(compose_file: str = "compose.yaml") -> list[str]:
    """The bot service's confinement in a compose file (read-only, its tmpfs, capabilities,
    privileges, memory), as the run arguments of an engine: what `docker run` needs to run the
    image as compose runs it."""
    bot = yaml.safe_load((ROOT / compose_file).read_text())["services"]["bot"]
    args = ["--read-only"] if bot.get("read_only") else []
    for mount in bot.get("tmpfs", []):
        args += ["--tmpfs", mount]
    for capability in bot.get("cap_drop", []):
        args += ["--cap-drop", capability]
    for option in bot.get("security_opt", []):
        args += ["--security-opt", option]
    if "mem_limit" in bot:
        args += ["--memory", str(bot["mem_limit"])]
    return args
