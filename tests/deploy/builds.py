"""The images the deploy tests run, built in the background from the start of the session.

Building the bot's image and the PostgreSQL stand-in takes minutes, most of it pip and the
compiler waiting on downloads and disks. Started as soon as the session knows a deploy test
will run (the deploy tests themselves run last, tests/deploy/conftest.py), the builds overlap
the rest of the suite instead of adding to it; each build runs at a low priority (`nice`), so
the tests that measure nothing still get the CPU first. A fixture that needs an image waits for
its build and fails with the engine's own words where it failed.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from containers import ROOT, TEST_IMAGES, Engine, source_hash

# What a build may take, in the background and waited for alike.
BUILD_TIMEOUT_S = 1800


def bot_image_tag() -> str:
    return f"{TEST_IMAGES}:{source_hash()}"


def _postgres_sources() -> list[Path]:
    folder = Path(__file__).parent / "postgres_image"
    tarball = next((ROOT / "third_party" / "pgvector").glob("*.tar.gz"))
    return [*sorted(folder.iterdir()), tarball]


def postgres_image_tag() -> str:
    """The stand-in for pgvector/pgvector, named by its sources' hash as the bot's image is."""
    digest = hashlib.sha256()
    for path in sorted(_postgres_sources(), key=lambda p: _in_context(p)):
        digest.update(_in_context(path).encode() + path.read_bytes())
    return f"{TEST_IMAGES}-postgres:{digest.hexdigest()[:12]}"


def postgres_context() -> Path:
    """A build folder holding the stand-in's Dockerfile and the pgvector release it compiles."""
    context = Path(tempfile.mkdtemp(prefix="articlebot-postgres-image-"))
    for path in _postgres_sources():
        shutil.copy(path, context / _in_context(path))
    return context


def _in_context(path: Path) -> str:
    return "pgvector.tar.gz" if path.name.endswith(".tar.gz") else path.name


@dataclass
class Build:
    tag: str
    context: Callable[[], Path]  # made only where the image is not there yet
    made: bool = False  # built by this session (so removed when it ends), not found made
    error: str | None = None
    seconds: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


class ImageBuilds:
    """The session's image builds, one after the other on a thread of their own."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.builds: dict[str, Build] = {}
        self._running: subprocess.Popen[str] | None = None
        self._stopped = False

    def start(self, plans: list[tuple[str, Callable[[], Path]]]) -> None:
        """Build these images in turn, on a thread of their own."""
        planned = [Build(tag, context) for tag, context in plans]
        self.builds.update({build.tag: build for build in planned})
        threading.Thread(
            target=self._run, args=(planned,), name="image-builds", daemon=True
        ).start()

    def _run(self, planned: list[Build]) -> None:
        for build in planned:
            try:
                if self.engine("image", "inspect", build.tag, check=False).returncode != 0:
                    started = time.perf_counter()
                    self._build(build)
                    build.made, build.seconds = True, time.perf_counter() - started
            except Exception as error:  # handed to the test that needs the image
                build.error = str(error)
            finally:
                build.done.set()

    def _build(self, build: Build) -> None:
        """`ENGINE build` of one image at a low priority; its output is the error if it fails."""
        if self._stopped:
            raise AssertionError("the session ended before the image was built")
        command = ["nice", "-n", "10", self.engine.exe, "build", *self.engine.build_args]
        command += ["-t", build.tag, str(build.context())]
        self._running = process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            output, _ = process.communicate(timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError(
                f"the build of {build.tag} did not end in {BUILD_TIMEOUT_S} s"
            ) from None
        finally:
            self._running = None
        if process.returncode != 0:
            raise AssertionError(
                f"{self.engine.exe} build {build.tag} exited {process.returncode}:\n"
                f"{output[-6000:]}"
            )

    def stop(self) -> None:
        """Stop a build still running when the session ends (an interrupted run), so that no
        engine process outlives it."""
        self._stopped = True
        running = self._running
        if running is not None and running.poll() is None:
            running.terminate()
            try:
                running.wait(timeout=30)
            except subprocess.TimeoutExpired:
                running.kill()

    def wait(self, tag: str) -> Build:
        build = self.builds[tag]
        if not build.done.wait(BUILD_TIMEOUT_S):
            raise AssertionError(f"the build of {tag} did not end in {BUILD_TIMEOUT_S} s")
        if build.error is not None:
            raise AssertionError(build.error)
        return build
