"""The two models side by side, in one run: `articlebot add` of SQuAD paragraphs as a whole
process, plain sentence-transformers float32 encoding of the same paragraphs, and the memory of
a process that has asked a question (its model loaded).

    .venv/bin/python -m tools.bench.models [--paragraphs 1000] [--repeat 3] [--before DIR]
        [--no-fp32] [--models CACHE]

Each model's add runs from an empty data folder (both int8 exports made once beforehand in a
model cache of the run's own, or in CACHE, as after the first run on a machine), alternating
between the models so that other load on the machine hits both alike; the medians are compared.
The float32 figure is `SentenceTransformer.encode` of the paragraphs' texts alone (prompts as
the model wants them), in this process, after the adds (`--no-fp32` leaves it out: e5's float32
model is made from the package's weights first, and encodes for minutes). The memory is the
maximum resident size of `articlebot ask` on the folder just made (`ru_maxrss` of the child).
Question times are `articlebot eval`'s (docs/quality.md). `--before DIR` adds a third add to each
round: an earlier release (a checkout of it, `git worktree add DIR COMMIT`) with its own default
model (all-MiniLM-L6-v2 before multilingual-e5-small was), run on this environment's packages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.bench.squad_data import write_articles

MODELS = ("all-MiniLM-L6-v2", "multilingual-e5-small")


BEFORE = "release before"


def _env(data_dir: Path, model: str, before: Path | None = None) -> dict[str, str]:
    # The run's model cache, a link beside the data folders: never the user's own by default.
    cache = {"ARTICLEBOT_MODEL_CACHE": str(data_dir.parent / "models")}
    if model == BEFORE:
        assert before is not None  # its code first on the path, its own default model
        env = {k: v for k, v in os.environ.items() if k != "ARTICLEBOT_MODEL"}
        return {**env, **cache, "ARTICLEBOT_DATA_DIR": str(data_dir), "PYTHONPATH": str(before)}
    return {
        **os.environ,
        **cache,
        "ARTICLEBOT_DATA_DIR": str(data_dir),
        "ARTICLEBOT_MODEL": model,
    }


def run_add(
    files: list[Path], data_dir: Path, model: str, before: Path | None = None
) -> dict[str, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "index", "add", *map(str, files), "--json"],
        env=_env(data_dir, model, before),
        capture_output=True,
        text=True,
        cwd=data_dir,  # not the checkout, whose `index` would come first on the path
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"articlebot add failed:\n{done.stderr[-2000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return {"wall_s": wall, "passages": sum(line["passages"] for line in lines)}


def ask_memory_mb(data_dir: Path, model: str) -> float:
    """Peak resident size of a process that loads the model and answers one question."""
    script = (
        "import resource, sys; from index.cli import main; "
        "main(['ask', 'When did the Normans conquer England?']); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=_env(data_dir, model), capture_output=True, text=True
    )
    return int(done.stderr.strip().splitlines()[-1]) / 1024


def fp32_encode_s(files: list[Path], cache_dir: Path, model: str) -> float:
    """Seconds sentence-transformers takes, in float32 on torch, to encode the articles'
    paragraphs as documents (all of their text, in batches of 32)."""
    from index.embedding.embedder import load_embedder

    embedder = load_embedder(model, backend="torch", cache_dir=cache_dir)
    # Each file is its title, then its paragraphs, separated by blank lines.
    texts = [p for f in files for p in f.read_text().split("\n\n")[1:] if p.strip()]
    st = embedder._model  # type: ignore[attr-defined]
    started = time.perf_counter()
    st.encode_document(texts, batch_size=32, normalize_embeddings=True)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of the release before")
    parser.add_argument("--no-fp32", action="store_true", help="leave out float32 encoding")
    parser.add_argument(
        "--models", type=Path, help="a model cache whose exports to use (default: made afresh)"
    )
    args = parser.parse_args(argv)
    timed = (*MODELS, BEFORE) if args.before else MODELS
    base = Path(tempfile.mkdtemp(prefix="articlebot-models-"))
    try:
        files = write_articles(base / "articles", args.paragraphs)
        models = base / "models"  # the model cache: both int8 exports, made before timing
        if args.models:
            models.symlink_to(args.models.resolve(), target_is_directory=True)
        else:
            models.mkdir()
        # The release before kept its export in the data folder's `models/`, and removed the
        # exports there it did not use: it gets a folder of the run's own, never `--models`.
        before_models = base / "models-before"
        before_models.mkdir()
        for model in timed:
            # A folder each: a second model adding to the first's collection would keep to the
            # first's model (a collection keeps its own), and make no export of its own.
            warm = base / f"warm-{model}"
            warm.mkdir()
            own = before_models if model == BEFORE else models
            (warm / "models").symlink_to(own, target_is_directory=True)
            run_add(files[:1], warm, model, args.before)
        runs: dict[str, list[dict[str, float]]] = {m: [] for m in timed}
        memory: dict[str, float] = {}
        for i in range(args.repeat):
            for model in timed:
                data = base / f"{model}-{i}"
                data.mkdir()
                if model == BEFORE:
                    (data / "models").symlink_to(before_models, target_is_directory=True)
                runs[model].append(run_add(files, data, model, args.before))
                if model != BEFORE:
                    memory[model] = ask_memory_mb(data, model)
                print(f"{model}: {runs[model][-1]['wall_s']:.1f} s", file=sys.stderr)
        result = {
            model: {
                "add_s_median": round(statistics.median(r["wall_s"] for r in runs[model]), 2),
                "passages": int(runs[model][0]["passages"]),
                "ask_rss_mb": round(memory[model], 1),
            }
            for model in MODELS
        }
        e5_add = result[MODELS[1]]["add_s_median"]
        ratios = {"add_ratio": round(e5_add / result[MODELS[0]]["add_s_median"], 2)}
        if not args.no_fp32:
            for model in MODELS:
                result[model]["fp32_encode_s"] = round(fp32_encode_s(files, models, model), 2)
            # How many times as fast as plain float32 encoding a whole e5 add is.
            ratios["fp32_encode_to_add"] = round(result[MODELS[1]]["fp32_encode_s"] / e5_add, 2)
        if args.before:
            before_add = statistics.median(r["wall_s"] for r in runs[BEFORE])
            result[BEFORE] = {"add_s_median": round(before_add, 2)}
            ratios["add_ratio_to_release_before"] = round(e5_add / before_add, 2)
        print(json.dumps({"paragraphs": args.paragraphs, **result, **ratios}))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
