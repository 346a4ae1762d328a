"""Helpers for tests (and bench/kill_test.py) that run real `articlebot` processes.

Articles are made on the fly from SQuAD v1.1 dev (../shared/eval): one small file per Wikipedia
article, its first paragraphs as the body, so every article is distinct and has a question whose
answer lies in it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SHARED = Path(__file__).resolve().parents[2] / "shared"
if not SHARED.exists():  # CI places ../shared beside the checkout
    SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SQUAD = SHARED / "eval" / "squad-v1.1-dev.json"

# `python -m index` is the `articlebot` console script, run by this interpreter (the venv's).
ARTICLEBOT = [sys.executable, "-m", "index"]

# The temp files VectorIndex.save leaves when killed mid-save: <index or sidecar name>XXXXXXXX.tmp
DEAD_TEMP = re.compile(r".*\.(faiss|json)[a-z0-9_]{8}\.tmp")


@dataclass(frozen=True)
class SampleArticle:
    path: Path
    title: str
    question: str  # a SQuAD question whose answer is in the article
    answer: str
    probe: str  # a sentence of the article: what to search for to find it whatever the ranker


def write_articles(folder: Path, count: int = 30, paragraphs: int = 3) -> list[SampleArticle]:
    """`count` distinct article files (title line, blank line, paragraphs) in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
    articles = []
    for number, entry in enumerate(data[:count]):
        title = entry["title"].replace("_", " ")
        contexts = [p["context"].strip() for p in entry["paragraphs"][:paragraphs]]
        path = folder / f"{number:02d}-{re.sub(r'[^a-z0-9]+', '-', title.lower())}.txt"
        path.write_text(title + "\n\n" + "\n\n".join(contexts) + "\n", encoding="utf-8")
        qa = entry["paragraphs"][0]["qas"][0]
        probe = re.split(r"(?<=[.!?])\s+", contexts[-1])[0]
        articles.append(SampleArticle(path, title, qa["question"], qa["answers"][0]["text"], probe))
    return articles


def new_data_dir(path: Path, models: Path | None = None) -> Path:
    """An empty data folder whose `models` is the shared one (the conftest `cli_models`)."""
    path.mkdir(parents=True)
    if models is not None:
        (path / "models").symlink_to(models, target_is_directory=True)
    return path


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")}
    env.update(ARTICLEBOT_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def run_cli(
    data_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    """Run `articlebot ARGS` to the end; cwd is the data folder's parent (no stray .env)."""
    return subprocess.run(
        [*ARTICLEBOT, *args],
        env=env or cli_env(data_dir),
        cwd=data_dir.parent,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_cli(
    data_dir: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*ARTICLEBOT, *args],
        env=env or cli_env(data_dir),
        cwd=data_dir.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def stats(data_dir: Path, collection: str = "default") -> dict[str, Any]:
    result = run_cli(data_dir, "stats", "--json", "--collection", collection)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return dict(json.loads(result.stdout))


def dead_temp_files(data_dir: Path) -> list[str]:
    folder = data_dir / "indexes"
    return (
        sorted(p.name for p in folder.iterdir() if DEAD_TEMP.fullmatch(p.name))
        if folder.exists()
        else []
    )


def kill_after_output(
    proc: subprocess.Popen[str], lines: int, delay_s: float, timeout: float = 600
) -> list[str]:
    """SIGKILL `proc` `delay_s` after it has printed `lines` lines (or exited); the lines read."""
    assert proc.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while len(seen) < lines and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break  # it ended
        seen.append(line)
    time.sleep(delay_s)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    if proc.stderr:
        proc.stderr.close()
    return seen
