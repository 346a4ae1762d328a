"""The kill drill's store-side drills (tests/drills/kill_drills.py runs them with the others):
six openers of one new data folder at once, and hostile files through a real process with
another collection compared byte for byte."""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from pathlib import Path
from typing import Any

from fault_tools import SampleArticle, new_data_dir, pdf_bomb, run_cli

from index.storage.sqlite_store import Store

MODEL, DIM = "all-MiniLM-L6-v2", 384


def log(message: str) -> None:
    print(message, flush=True)


def drill_schema(work: Path, trials: int) -> dict[str, Any]:
    failures = 0
    for trial in range(trials):
        path = work / "schema" / str(trial) / "articlebot.db"
        barrier = threading.Barrier(6)
        errors: list[BaseException] = []

        def open_store(
            path: Path = path,
            barrier: threading.Barrier = barrier,
            errors: list[BaseException] = errors,
        ) -> None:
            barrier.wait()
            try:
                store = Store(path)
                store.set_collection_model("default", MODEL, DIM)
                store.close()
            except Exception as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_store) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        failures += bool(errors)
    shutil.rmtree(work / "schema", ignore_errors=True)
    log(f"  {trials} new folders opened by 6 at once: {failures} failed")
    return {"trials": trials, "failed_trials": failures}


# hostile files and a 100,000-character paragraph


def drill_hostile(work: Path, models: Path, articles: list[SampleArticle]) -> dict[str, Any]:
    data_dir = new_data_dir(work / "hostile", models)
    seeded = run_cli(data_dir, "add", *[str(a.path) for a in articles[:3]], "--json")
    assert seeded.returncode == 0, seeded.stderr
    before = fingerprint(data_dir)
    folder = work / "hostile-files"
    folder.mkdir()
    cases = {
        "invalid UTF-8": ("bad.txt", b"Headline\n\n" + bytes(range(0x80, 0x100)) * 40),
        "NUL bytes": ("nul.txt", b"\x00" * 4_000 + b"text"),
        "fake PDF": ("fake.pdf", b"This is plain text wearing a .pdf name."),
        "PDF bomb (300 MB inflated)": ("bomb.pdf", pdf_bomb(300)),
        "20,000 nested divs": (
            "nested.html",
            ("<html><body>" + "<div>" * 20_000 + "<p>Deep.</p>" + "</div>" * 20_000).encode(),
        ),
    }
    paths = []
    for name, data in cases.values():
        (folder / name).write_bytes(data)
        paths.append(folder / name)
    huge = folder / "huge.txt"
    with huge.open("w") as f:
        block = "All work and no play makes Jack a dull boy.\n\n" * 1000
        while f.tell() < 70_000_000:
            f.write(block)
    paths.append(huge)
    labels = [*cases, "70 MB text file"]
    long = folder / "long.txt"
    body = " ".join(f"word{i}" for i in range(20_000))[:100_000].rsplit(" ", 1)[0]
    long.write_text(f"One long paragraph\n\n{body}\n")
    results = {}
    for label, path in zip(labels, paths, strict=True):
        started = time.perf_counter()
        done = run_cli(data_dir, "add", str(path), "--collection", "hostile", "--json")
        line = json.loads(done.stdout) if done.stdout.strip() else {}
        results[label] = {
            "exit": done.returncode,
            "traceback": "Traceback" in done.stderr,
            "message": line.get("error"),
            "seconds": round(time.perf_counter() - started, 1),
        }
        log(
            f"  {label}: exit {done.returncode} in {results[label]['seconds']} s: "
            f"{line.get('error')}"
        )
    started = time.perf_counter()
    done = run_cli(data_dir, "add", str(long), "--collection", "hostile", "--json")
    line = json.loads(done.stdout)
    results["100,000-character paragraph"] = {
        "exit": done.returncode,
        "traceback": "Traceback" in done.stderr,
        "passages": line.get("passages"),
        "seconds": round(time.perf_counter() - started, 1),
    }
    log(
        f"  100,000-character paragraph: exit {done.returncode}, {line.get('passages')} "
        f"passages in {results['100,000-character paragraph']['seconds']} s"
    )
    untouched = fingerprint(data_dir) == before
    log(f"  the other collection untouched: {untouched}")
    return {"cases": results, "other_collection_untouched": untouched}


def fingerprint(data_dir: Path) -> tuple[Any, ...]:
    store = Store(data_dir / "articlebot.db")
    try:
        rows = [a.to_json() for a in store.list_articles("default")]
        passages = store.passages("default")
        vectors = [
            hashlib.sha256(v.tobytes()).hexdigest()
            for _, v in store.iter_embeddings("default", DIM)
        ]
    finally:
        store.close()
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (data_dir / "indexes").glob("default.*")
    }
    return rows, passages, vectors, files
