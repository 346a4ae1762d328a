"""`articlebot add` of SQuAD paragraphs, as a whole process, against plain sentence-transformers.

    .venv/bin/python -m tools.bench.add_vs_plain [--paragraphs 1000] [--repeat 3]

The CLI side runs `articlebot add FILES... --json` as a subprocess under `time`: start-up, model
load, reading, chunking, embedding, SQLite and the index all count. "Cold" starts from an empty
data folder, so it includes the one-time int8 ONNX export; "warm" starts from an empty data
folder whose `models/` already holds that export (as after the first run on a machine).

The plain side is `SentenceTransformer(model).encode(paragraphs)` in float32, timed in this
process after the model is loaded and a warm-up batch has run: the encode call alone.

Runs alternate (plain, CLI, plain, CLI, ...) so that other load on the machine hits both sides
alike; the medians are compared. CPU seconds are printed too, being less sensitive to load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bench.squad_data import squad_paragraphs, write_articles

CLI = [str(Path(sys.executable).with_name("articlebot"))]


def run_cli(files: list[Path], data_dir: Path, backend: str) -> dict[str, float]:
    env = {**os.environ, "ARTICLEBOT_DATA_DIR": str(data_dir), "ARTICLEBOT_BACKEND": backend}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [*CLI, "add", *map(str, files), "--json"], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"articlebot add failed:\n{done.stderr[-2000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "passages": sum(line["passages"] for line in lines),
        "load": os.getloadavg()[0],
    }


def fresh_data_dir(base: Path, models: Path | None) -> Path:
    data = Path(tempfile.mkdtemp(dir=base, prefix="data-"))
    if models is not None:
        (data / "models").symlink_to(models, target_is_directory=True)
    return data


def plain_encode(model: object, paragraphs: list[str]) -> dict[str, float]:
    cpu = time.process_time()
    started = time.perf_counter()
    model.encode(paragraphs)  # type: ignore[attr-defined]
    return {
        "wall_s": time.perf_counter() - started,
        "cpu_s": time.process_time() - cpu,
        "load": os.getloadavg()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backend", default="auto", help="ARTICLEBOT_BACKEND for the CLI")
    parser.add_argument(
        "--models", type=Path, help="a data folder's models/ that holds the export: skip cold"
    )
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="articlebot-bench-"))
    try:
        files = write_articles(base / "articles", args.paragraphs)
        paragraphs = squad_paragraphs(args.paragraphs)
        print(f"{len(paragraphs)} SQuAD dev paragraphs in {len(files)} article files", flush=True)

        if args.models:
            models, cold = args.models.resolve(), None
        else:
            cold_dir = fresh_data_dir(base, None)
            cold = run_cli(files, cold_dir, args.backend)
            models = cold_dir / "models"
            print(f"cold CLI add (export included): {cold['wall_s']:.1f} s wall", flush=True)

        from sentence_transformers import SentenceTransformer

        from index.embedding.embedder import default_model_path

        model = SentenceTransformer(default_model_path(), device="cpu")
        model.encode(paragraphs[:64])  # warm-up

        plain, warm = [], []
        for _ in range(args.repeat):
            plain.append(plain_encode(model, paragraphs))
            warm.append(run_cli(files, fresh_data_dir(base, models), args.backend))
            print(
                f"  plain encode {plain[-1]['wall_s']:.1f} s, warm CLI add "
                f"{warm[-1]['wall_s']:.1f} s (load {warm[-1]['load']:.1f})",
                flush=True,
            )
        report(cold, plain, warm, len(paragraphs))
    finally:
        shutil.rmtree(base, ignore_errors=True)


def report(
    cold: dict[str, float] | None,
    plain: list[dict[str, float]],
    warm: list[dict[str, float]],
    n: int,
) -> None:
    def median(runs: list[dict[str, float]], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    plain_wall, warm_wall = median(plain, "wall_s"), median(warm, "wall_s")
    figures = {
        "paragraphs": n,
        "passages_stored": int(warm[0]["passages"]),
        "plain_encode_s": round(plain_wall, 2),
        "plain_encode_cpu_s": round(median(plain, "cpu_s"), 2),
        "cli_add_warm_s": round(warm_wall, 2),
        "cli_add_warm_cpu_s": round(median(warm, "cpu_s"), 2),
        "cli_add_cold_s": round(cold["wall_s"], 2) if cold else None,
        "ratio_warm": round(plain_wall / warm_wall, 2),
        "ratio_cold": round(plain_wall / cold["wall_s"], 2) if cold else None,
        "ratio_warm_cpu": round(median(plain, "cpu_s") / median(warm, "cpu_s"), 2),
        "load_avg_1m": round(statistics.mean(r["load"] for r in plain + warm), 2),
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
