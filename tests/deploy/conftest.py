"""Fixtures for what operators run: the image, built by a real container engine where one
works (tests/deploy/containers.py), reported as not run, with the reason, where none does.

The images the tests build have names of their own (containers.TEST_IMAGES) and are removed
when the tests end; ARTICLEBOT_TEST_KEEP_IMAGES=1 keeps them, so that the next run of the same
sources reuses them."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

import pytest
from containers import ROOT, TEST_IMAGES, Engine, keep_images, source_hash, working_engine

# The health check's test drives the bot with the loopback fake of Discord the bot tests use.
sys.path.insert(0, str(ROOT / "tests" / "discord_bot"))


@pytest.fixture(scope="session")
def engine() -> Engine:
    found, why = working_engine()
    if found is None:
        pytest.skip(
            f"no container engine works here ({why}); on Debian, "
            '`eval "$(../shared/tools/podman-here.sh)"` sets podman up'
        )
    return found


@pytest.fixture(scope="session")
def image(engine: Engine) -> Iterator[str]:
    """The project's image, built from the checkout's Dockerfile (its build time printed)."""
    tag = f"{TEST_IMAGES}:{source_hash()}"
    # The images of earlier sources are this fixture's own: removed, so runs do not pile up.
    listed = engine("images", "--format", "{{.Repository}}:{{.Tag}}", check=False).stdout.split()
    for old in listed:
        if old.startswith(f"{TEST_IMAGES}:") and old != tag:
            engine("rmi", old, check=False)
    built = engine("image", "inspect", tag, check=False).returncode != 0
    if built:
        started = time.perf_counter()
        engine("build", *engine.build_args, "-t", tag, str(ROOT), timeout=1800)
        print(f"\nimage {tag} built in {time.perf_counter() - started:.0f} s")
    try:
        yield tag
    finally:
        if built and not keep_images():
            engine("rmi", tag, check=False)
