"""Fixtures for what operators run: the image, built by a real container engine where one
works (tests/deploy/containers.py), reported as not run, with the reason, where none does.

The images the tests build have names of their own (containers.TEST_IMAGES) and are removed
when the tests end; ARTICLEBOT_TEST_KEEP_IMAGES=1 keeps them, so that the next run of the same
sources reuses them."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from builds import ImageBuilds, bot_image_tag, postgres_context, postgres_image_tag
from containers import ROOT, TEST_IMAGES, Engine, keep_images, working_engine

HERE = Path(__file__).resolve().parent

# The health check's test drives the bot with the loopback fake of Discord the bot tests use.
sys.path.insert(0, str(ROOT / "tests" / "discord_bot"))


# The fixtures that need an image, and the builds that make them.
IMAGE_FIXTURES = {"image": "bot", "postgres_image": "postgres"}
_builds: ImageBuilds | None = None


def _is_deploy(item: pytest.Item) -> bool:
    return Path(str(item.path)).is_relative_to(HERE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The deploy tests run last, so that the images they need build while the rest run."""
    items.sort(key=_is_deploy)  # stable: each part keeps its order


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start building the images the selected tests need, once the session knows them."""
    global _builds
    if session.config.option.collectonly:
        return
    wanted = {
        IMAGE_FIXTURES[name]
        for item in session.items
        if _is_deploy(item)
        for name in getattr(item, "fixturenames", ())
        if name in IMAGE_FIXTURES
    }
    found, _ = working_engine() if wanted else (None, "")
    if found is None:
        return
    plans = []
    if "bot" in wanted:
        tag = bot_image_tag()
        # The images of earlier sources are the tests' own: removed, so runs do not pile up.
        listed = found("images", "--format", "{{.Repository}}:{{.Tag}}", check=False).stdout
        for old in listed.split():
            if old.startswith(f"{TEST_IMAGES}:") and old != tag:
                found("rmi", old, check=False)
        plans.append((tag, lambda: ROOT))
    if "postgres" in wanted:
        plans.append((postgres_image_tag(), postgres_context))
    _builds = ImageBuilds(found)
    _builds.start(plans)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """An interrupted session stops the build it started: no engine process outlives it."""
    if _builds is not None:
        _builds.stop()


@pytest.fixture(scope="session")
def engine() -> Engine:
    found, why = working_engine()
    if found is None:
        pytest.skip(
            f"no container engine works here ({why}); on Debian, "
            '`eval "$(../shared/tools/podman-here.sh)"` sets podman up'
        )
    return found


# What a build that could not reach the network says (pip, apt, curl).
_UNREACHABLE = re.compile(
    r"Name or service not known|Temporary failure in name resolution|Could not resolve host"
    r"|Failed to establish a new connection"
)


def built_image(engine: Engine, kind: str, tag: str) -> Iterator[str]:
    """The image `tag`, waited for from the session's builds (its build time printed), removed
    at the end where this session built it."""
    global _builds
    if _builds is None or tag not in _builds.builds:  # not foreseen: built now
        _builds = _builds or ImageBuilds(engine)
        _builds.start([(tag, (lambda: ROOT) if kind == "bot" else postgres_context)])
    try:
        build = _builds.wait(tag)
    except AssertionError as failure:
        # An engine no one set up for a machine without a registry or package index (no
        # PODMAN_BUILD_ARGS) cannot fetch what the image installs: that is this machine, not
        # the image, and is said as such. Set up (CI), the same failure fails.
        unreachable = _UNREACHABLE.search(str(failure))
        if unreachable and not os.environ.get("PODMAN_BUILD_ARGS"):
            pytest.skip(
                "the image cannot be built here: the build cannot reach its package index "
                f'({unreachable.group(0)}); `eval "$(../shared/tools/podman-here.sh)"` sets '
                "podman up for a machine without one"
            )
        raise
    if build.made:
        print(f"\nimage {tag} built in {build.seconds:.0f} s (in the background)")
    try:
        yield tag
    finally:
        if build.made and not keep_images():
            engine("rmi", tag, check=False)


@pytest.fixture(scope="session")
def image(engine: Engine) -> Iterator[str]:
    """The project's image, built from the checkout's Dockerfile."""
    yield from built_image(engine, "bot", bot_image_tag())


@pytest.fixture(scope="session")
def postgres_image(engine: Engine) -> Iterator[str]:
    """The stand-in for pgvector/pgvector (tests/deploy/postgres_image), under a name of the
    tests' own."""
    yield from built_image(engine, "postgres", postgres_image_tag())
