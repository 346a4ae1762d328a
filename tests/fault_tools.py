"""Helpers for tests (and tests/drills/kill_drills.py) that run real `articlebot` processes.

Articles are made on the fly from an excerpt of SQuAD v1.1 dev kept with the tests
(tests/data/squad-excerpt.json, CC BY-SA 4.0): one small file per Wikipedia article, its first
paragraphs as the body, so every article is distinct and has a question whose answer lies in it.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from index import Library
from index.ingest.readers import read_path

SQUAD_EXCERPT = Path(__file__).resolve().parent / "data" / "squad-excerpt.json"

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
    data = json.loads(SQUAD_EXCERPT.read_text(encoding="utf-8"))["articles"]
    if count > len(data) or paragraphs > min(len(e["paragraphs"]) for e in data):
        raise ValueError(f"the SQuAD excerpt holds {len(data)} articles of 3 paragraphs")
    articles = []
    for number, entry in enumerate(data[:count]):
        title = entry["title"].replace("_", " ")
        contexts = [p.strip() for p in entry["paragraphs"][:paragraphs]]
        path = folder / f"{number:02d}-{re.sub(r'[^a-z0-9]+', '-', title.lower())}.txt"
        path.write_text(title + "\n\n" + "\n\n".join(contexts) + "\n", encoding="utf-8")
        probe = re.split(r"(?<=[.!?])\s+", contexts[-1])[0]
        articles.append(SampleArticle(path, title, entry["question"], entry["answer"], probe))
    return articles


def new_data_dir(path: Path, models: Path | None = None) -> Path:
    """An empty data folder whose `models` is the shared one (the conftest `cli_models`)."""
    path.mkdir(parents=True)
    if models is not None:
        (path / "models").symlink_to(models, target_is_directory=True)
    return path


def stored_data_dir(
    path: Path, models: Path, make_library: Callable[..., Library], articles: list[SampleArticle]
) -> Path:
    """A data folder (sharing `models`) that already holds these articles, closed again."""
    data_dir = new_data_dir(path, models)
    library = make_library(data_dir)
    for article in articles:
        library.collection().add(read_path(article.path))
    library.close()
    return data_dir


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")}
    env.update(ARTICLEBOT_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    env.update(extra)
    return env


def run_cli(
    data_dir: Path,
    *args: str,
    input_bytes: bytes | None = None,
    env_extra: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    """Run `articlebot ARGS` to the end; cwd is the data folder's parent (no stray .env)."""
    done = subprocess.run(
        [*ARTICLEBOT, *args],
        env=cli_env(data_dir, **(env_extra or {})),
        cwd=data_dir.parent,
        input=input_bytes or b"",
        capture_output=True,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        done.args,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
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


def tiny_pdf(text: bytes) -> bytes:
    """A minimal valid one-page PDF whose page shows `text`."""
    return _pdf(zlib.compress(b"BT /F1 12 Tf 72 720 Td (" + text + b") Tj ET"))


def pdf_bomb(megabytes: int = 300) -> bytes:
    """A PDF whose page's few hundred kB of content inflate to `megabytes` MB."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b"BT /F1 12 Tf 72 720 Td (")]
    block = b"A" * 1_000_000
    parts += [packer.compress(block) for _ in range(megabytes)]
    parts += [packer.compress(b") Tj ET"), packer.flush()]
    return _pdf(b"".join(parts))


def shared_page_pdf(pages: int = 79, megabytes_a_page: int = 1) -> bytes:
    """A small PDF whose pages all show one compressed page of text: tiny file, huge text."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b"BT /F1 12 Tf 72 720 Td (")]
    words = b"word " * 200_000  # 1 MB of text a page
    parts += [packer.compress(words) for _ in range(megabytes_a_page)]
    parts += [packer.compress(b") Tj ET"), packer.flush()]
    return _pdf(b"".join(parts), pages)


def _pdf(stream: bytes, pages: int = 1) -> bytes:
    # Page 1 is object 3; every other page is a copy (objects 6 on) showing the same stream.
    kids = b" ".join(b"%d 0 R" % n for n in [3, *range(6, 6 + pages - 1)])
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % pages,
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    objects += [objects[2]] * (pages - 1)
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def squad_file(folder: Path, articles: int) -> Path:
    """The test SQuAD excerpt in SQuAD's own format: each article's first question."""
    data = json.loads(SQUAD_EXCERPT.read_text(encoding="utf-8"))["articles"][:articles]
    items = [
        {
            "title": a["title"],
            "paragraphs": [
                {
                    "context": text,
                    "qas": [
                        {
                            "id": f"{n}",
                            "question": a["question"],
                            "answers": [{"text": a["answer"]}],
                        }
                    ]
                    if i == 0
                    else [],
                }
                for i, text in enumerate(a["paragraphs"])
            ],
        }
        for n, a in enumerate(data)
    ]
    path = folder / "train.json"
    path.write_text(json.dumps({"data": items}), encoding="utf-8")
    return path
