"""Fault drills on real `articlebot` processes and real SQLite/FAISS files; prints the figures.

    .venv/bin/python tests/drills/kill_drills.py          # every drill, about 10 min on 2 cores
    .venv/bin/python tests/drills/kill_drills.py --only kills --kills 8 --seed 7 --out k.json

Drills (each checks from outside, with `articlebot stats --json` in a new process):

- kills: `kill -9` at random moments of `articlebot add` of 30 SQuAD articles, 8 times (the first
  ones at random times from start, so they may land in start-up or the model's one-time ONNX
  export; the others at a random moment after a random article was stored). After each:
  indexed == passages, no dead temp file left; then a last add gives exactly 30 articles and
  every article is found again.
- concurrent: three `articlebot add` of 10 different articles each, at once, while a fourth
  process answers questions (`ask --batch`); all exit 0, 30 articles, the index file already
  complete before anything repairs it. `--no-lock` runs the same with the index lock disabled,
  to show what the lock prevents.
- rebuild: `kill -9` at random moments of `articlebot rebuild` of a large collection (synthetic
  vectors, so the save of the index takes long enough to be hit).
- schema: six openers of one new data folder at once, many times ("database is locked" race).
- hostile: the hostile files through a real process, another collection compared byte for byte;
  and one 100,000-character paragraph added whole.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]  # the checkout
sys.path.insert(0, str(ROOT / "tests"))

from fault_tools import (  # noqa: E402
    ARTICLEBOT,
    SampleArticle,
    cli_env,
    dead_temp_files,
    kill_after_output,
    new_data_dir,
    run_cli,
    start_cli,
    stats,
    write_articles,
)
from store_drills import drill_hostile, drill_schema  # noqa: E402

from index.records import Document  # noqa: E402
from index.storage.sqlite_store import Store  # noqa: E402

MODEL, DIM = "all-MiniLM-L6-v2", 384


def log(message: str) -> None:
    print(message, flush=True)


def timed_stats(data_dir: Path) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    report = stats(data_dir)
    return report, time.perf_counter() - started


def sidecar_count(data_dir: Path) -> int | None:
    path = data_dir / "indexes" / "default.json"
    try:
        return int(json.loads(path.read_text())["count"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def model_leftovers(data_dir: Path) -> list[str]:
    """Work folders or temp files a killed ONNX export left in <data>/models."""
    folder = data_dir / "models"
    if not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


# kills during adds


def drill_kills(
    work: Path, models: Path, articles: list[SampleArticle], kills: int, rng: random.Random
) -> dict[str, Any]:
    data_dir = new_data_dir(work / "kills", models)
    files = [str(a.path) for a in articles]
    rounds = []
    stored = 0
    for number in range(kills):
        started = time.perf_counter()
        proc = start_cli(data_dir, "add", *files, "--json")
        if number < 2:  # anywhere from start-up on: imports, the model's load or export
            lines, delay = 0, rng.uniform(0.5, 8.0)
            how = f"at {delay:.2f} s from start"
        else:
            lines, delay = stored + 1 + rng.randint(0, 1), rng.uniform(0, 1.0)
            how = f"{delay:.2f} s after line {lines}"
        printed = kill_after_output(proc, lines=lines, delay_s=delay)
        lived = time.perf_counter() - started
        report, seconds = timed_stats(data_dir)
        entry = {
            "kill": number + 1,
            "when": how,
            "killed": proc.returncode == -signal.SIGKILL,
            "lived_s": round(lived, 2),
            "lines_printed": len(printed),
            "articles": report["articles"],
            "passages": report["passages"],
            "indexed": report["indexed"],
            "ok": report["indexed"] == report["passages"],
            "stats_s": round(seconds, 2),
            "dead_temp_files_after": dead_temp_files(data_dir),
            "model_leftovers": model_leftovers(data_dir),
        }
        rounds.append(entry)
        stored = report["articles"]
        log(
            f"  kill {number + 1}: {how}, lived {lived:.1f} s -> {stored} articles, "
            f"{report['passages']} passages, {report['indexed']} indexed, stats {seconds:.1f} s"
        )
    final = run_cli(data_dir, "add", *files, "--json")
    final_lines = [json.loads(x) for x in final.stdout.splitlines()]
    report, seconds = timed_stats(data_dir)
    found = ask_probes(data_dir, articles)
    result = {
        "rounds": rounds,
        "all_killed": all(r["killed"] for r in rounds),
        "all_consistent": all(r["ok"] and not r["dead_temp_files_after"] for r in rounds),
        "final_add_exit": final.returncode,
        "final_added": sum(1 for x in final_lines if x.get("added")),
        "final_already_present": sum(1 for x in final_lines if x.get("already_present")),
        "final_stats": report,
        "exactly_30": report["articles"] == 30 and report["indexed"] == report["passages"],
        "probes_found": found,
        "traceback": "Traceback" in final.stderr,
    }
    log(
        f"  final add: exit {final.returncode}, {result['final_added']} added, "
        f"{result['final_already_present']} already there -> {report['articles']} articles, "
        f"{report['indexed']}/{report['passages']} indexed; {found}/30 articles found again"
    )
    return result


def ask_probes(data_dir: Path, articles: list[SampleArticle]) -> int:
    batch = data_dir.parent / f"{data_dir.name}-probes.jsonl"
    batch.write_text("".join(json.dumps({"question": a.probe}) + "\n" for a in articles))
    result = run_cli(data_dir, "ask", "--batch", str(batch), "--json")
    answers = [json.loads(x) for x in result.stdout.splitlines()]
    return sum(
        1
        for article, answer in zip(articles, answers, strict=False)
        if answer.get("citations") and answer["citations"][0]["title"] == article.title
    )


# concurrent adds

NO_LOCK = """
import contextlib, sys
import index.search.index_file as index_file
index_file.file_lock = lambda path: contextlib.nullcontext()
from index.cli import main
sys.exit(main(sys.argv[1:]))
"""


def drill_concurrent(
    work: Path, models: Path, articles: list[SampleArticle], rounds: int, lock: bool
) -> dict[str, Any]:
    results = []
    for number in range(rounds):
        data_dir = new_data_dir(
            work / f"concurrent-{'lock' if lock else 'nolock'}-{number}", models
        )
        questions = data_dir.parent / f"{data_dir.name}-questions.jsonl"
        questions.write_text(
            "".join(json.dumps({"question": a.probe}) + "\n" for a in articles * 20)
        )
        command = ARTICLEBOT if lock else [sys.executable, "-c", NO_LOCK]
        started = time.perf_counter()
        adders = [
            subprocess.Popen(
                [*command, "add", *[str(a.path) for a in articles[i::3]], "--json"],
                env=cli_env(data_dir),
                cwd=data_dir.parent,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(3)
        ]
        asker = start_cli(data_dir, "ask", "--batch", str(questions), "--json")
        answer_times: list[float] = []
        asker_lines: list[dict[str, Any]] = []

        def read_answers(
            asker: subprocess.Popen[str] = asker,
            lines: list[dict[str, Any]] = asker_lines,
            times: list[float] = answer_times,
            started: float = started,
        ) -> None:
            assert asker.stdout is not None
            for line in asker.stdout:
                lines.append(json.loads(line))
                times.append(time.perf_counter() - started)

        reader = threading.Thread(target=read_answers)
        reader.start()
        outputs = [proc.communicate(timeout=900) for proc in adders]
        adds_done = time.perf_counter() - started
        asker.kill()  # it has answered enough; the rest would only repeat
        reader.join(timeout=60)
        asker.wait()
        file_count = sidecar_count(data_dir)
        report, seconds = timed_stats(data_dir)
        errors = [x for x in asker_lines if "error" in x]
        entry = {
            "exit_codes": [proc.returncode for proc in adders],
            "tracebacks": sum("Traceback" in err for _, err in outputs),
            "added": sum(
                1 for out, _ in outputs for x in out.splitlines() if json.loads(x).get("added")
            ),
            "adds_s": round(adds_done, 1),
            "index_file_count_before_stats": file_count,
            "stats": report,
            "stats_s": round(seconds, 2),
            "ok": report["articles"] == 30 and report["indexed"] == report["passages"],
            "answers_during_adds": sum(1 for t in answer_times if t <= adds_done),
            "answer_errors": len(errors),
        }
        results.append(entry)
        log(
            f"  round {number + 1} ({'lock' if lock else 'NO lock'}): exits {entry['exit_codes']}, "
            f"{entry['added']} added in {adds_done:.1f} s; index file held {file_count} of "
            f"{report['passages']} vectors before stats; stats {report['articles']} articles, "
            f"{report['indexed']}/{report['passages']} indexed; {entry['answers_during_adds']} "
            f"answers during the adds, {len(errors)} errors"
        )
    return {"rounds": results}


# kills during rebuilds of a large collection


def fill_synthetic(data_dir: Path, passages: int) -> None:
    """`passages` random unit vectors in 1,000-passage articles, written straight to SQLite."""
    store = Store(data_dir / "articlebot.db")
    store.set_collection_model("default", MODEL, DIM)
    rng = np.random.default_rng(0)
    per = 1_000
    for start in range(0, passages, per):
        vectors = rng.standard_normal((per, DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = [f"synthetic passage {start + i}" for i in range(per)]
        doc = Document(f"Synthetic {start}", texts, None, None, None, None, "text", [])
        store.insert_article(
            "default",
            doc,
            hashlib.sha256(str(start).encode()).hexdigest(),
            [(i + 1, 0, t) for i, t in enumerate(texts)],
            vectors,
            None,
        )
    store.close()


def drill_rebuild(
    work: Path, models: Path, passages: int, kills: int, rng: random.Random
) -> dict[str, Any]:
    data_dir = new_data_dir(work / "rebuild", models)
    fill_synthetic(data_dir, passages)
    started = time.perf_counter()
    first = run_cli(data_dir, "rebuild", "--json")
    full = time.perf_counter() - started
    assert first.returncode == 0, first.stderr
    log(f"  {passages:,} passages; an unkilled rebuild takes {full:.1f} s (process included)")
    rounds = []
    for number in range(kills):
        proc = start_cli(data_dir, "rebuild", "--json")
        if number % 2:  # at a random moment of the rebuild
            delay = rng.uniform(0.3 * full, 1.05 * full)
            how = f"at {delay:.2f} s"
            kill_after_output(proc, lines=0, delay_s=delay)
        else:  # inside the index save: once its temp file appears, within 0.3 s
            seen = wait_for_temp_file(data_dir, proc, timeout=3 * full)
            delay = rng.uniform(0, 0.3)
            how = f"{delay:.2f} s into the save" if seen else "(no save seen)"
            kill_after_output(proc, lines=0, delay_s=delay)
        left = dead_temp_files(data_dir)
        report, seconds = timed_stats(data_dir)
        entry = {
            "kill": number + 1,
            "when": how,
            "killed": proc.returncode == -signal.SIGKILL,
            "temp_files_left_by_kill": left,
            "stats_s": round(seconds, 2),
            "indexed": report["indexed"],
            "passages": report["passages"],
            "ok": report["indexed"] == report["passages"] and not dead_temp_files(data_dir),
        }
        rounds.append(entry)
        log(
            f"  kill {number + 1} {how}: {'killed' if entry['killed'] else 'had ended'}"
            f", left {left or 'no temp file'}; stats {seconds:.1f} s -> "
            f"{report['indexed']:,}/{report['passages']:,} indexed"
        )
    _, warm = timed_stats(data_dir)
    for path in (data_dir / "indexes").glob("default.*"):
        if path.suffix in (".faiss", ".json"):
            path.unlink()
    _, cold = timed_stats(data_dir)
    log(f"  stats with a sound index {warm:.1f} s; with none (rebuilt from SQLite) {cold:.1f} s")
    return {
        "passages": passages,
        "rebuild_s": round(full, 2),
        "rounds": rounds,
        "stats_sound_index_s": round(warm, 2),
        "stats_no_index_s": round(cold, 2),
    }


def wait_for_temp_file(data_dir: Path, proc: subprocess.Popen[str], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    folder = data_dir / "indexes"
    while time.monotonic() < deadline and proc.poll() is None:
        if any(p.suffix == ".tmp" for p in folder.iterdir()):
            return True
        time.sleep(0.002)
    return False


# the "database is locked" race when a new folder is created


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        choices=["kills", "concurrent", "rebuild", "schema", "hostile"],
        action="append",
        help="run only these drills (repeatable)",
    )
    parser.add_argument("--kills", type=int, default=8, help="kills in the add drill (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of concurrent adds")
    parser.add_argument("--no-lock", action="store_true", help="also run concurrent adds unlocked")
    parser.add_argument("--rebuild-passages", type=int, default=100_000)
    parser.add_argument("--rebuild-kills", type=int, default=8)
    parser.add_argument("--schema-trials", type=int, default=300)
    parser.add_argument("--seed", type=int, default=None, help="seed of the random moments")
    parser.add_argument("--models", type=Path, help="a models folder with the ONNX export to reuse")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    rng = random.Random(seed)
    drills = args.only or ["schema", "kills", "concurrent", "rebuild", "hostile"]
    work = Path(tempfile.mkdtemp(prefix="articlebot-kill-test-"))
    models = args.models or work / "models"
    models.mkdir(exist_ok=True)
    articles = write_articles(work / "articles", count=30)
    log(f"seed {seed}; working in {work}")
    figures: dict[str, Any] = {"seed": seed}
    for drill in drills:
        log(f"{drill}:")
        started = time.perf_counter()
        if drill == "kills":
            figures[drill] = drill_kills(work, models, articles, args.kills, rng)
        elif drill == "concurrent":
            figures[drill] = drill_concurrent(work, models, articles, args.rounds, lock=True)
            if args.no_lock:
                figures["concurrent_no_lock"] = drill_concurrent(
                    work, models, articles, args.rounds, lock=False
                )
        elif drill == "rebuild":
            figures[drill] = drill_rebuild(
                work, models, args.rebuild_passages, args.rebuild_kills, rng
            )
        elif drill == "schema":
            figures[drill] = drill_schema(work, args.schema_trials)
        elif drill == "hostile":
            figures[drill] = drill_hostile(work, models, articles)
        log(f"  ({time.perf_counter() - started:.0f} s)")
    if "kills" in figures:
        times = [r["stats_s"] for r in figures["kills"]["rounds"]]
        log(
            "stats after a kill (recovery, process included): "
            f"median {statistics.median(times):.1f} s, max {max(times):.1f} s"
        )
    if args.out:
        args.out.write_text(json.dumps(figures, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
