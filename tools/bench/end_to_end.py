"""Where the time goes, per backend: adding articles, and each question's stages.

    .venv/bin/python -m tools.bench.end_to_end [--paragraphs 1000] [--questions 200]
        [--backends onnx torch] [--models DATA_DIR/models]

For each backend, in one warm process (model loaded once, not timed):
- adding: the SQuAD dev paragraphs as articles, all in one `Collection.add_many` as
  `articlebot add FILES...` adds them, with paragraphs/s overall; then the stored passages
  embedded again in one call, for the embedding alone;
- asking: the sample article's questions, then SQuAD dev questions against those paragraphs,
  each timed in stages: encode (the question's vector), search (vector and keyword search and
  their fusion), compose (the extractive answer, which embeds candidate sentences), and the
  rest (reading passages from SQLite, re-scoring). Figures are medians and 95th percentiles.
Every model and index is warm, as in the bot; the first question of each set is not counted.
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.bench.squad_data import SAMPLE, SAMPLE_QUESTIONS, squad_questions, write_articles

Clock = dict[str, float]


def timed(clock: Clock, stage: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            clock[stage] += time.perf_counter() - started

    return wrapper


def instrument(clock: Clock) -> None:
    """Time the stages of `Collection.ask` by wrapping what it calls (this process only)."""
    import index.collection as c
    import index.search.bm25_index as b
    import index.search.candidates as cand
    import index.search.vectors as v

    v.VectorIndex.search = timed(clock, "search", v.VectorIndex.search)  # type: ignore[method-assign]
    b.KeywordIndex.search = timed(clock, "search", b.KeywordIndex.search)  # type: ignore[method-assign]
    cand.fuse = timed(clock, "search", cand.fuse)
    c.compose = timed(clock, "compose", c.compose)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ask_all(collection: Any, questions: list[str], clock: Clock) -> dict[str, object]:
    encode = collection.model.embedder.encode_query
    collection.ask(questions[0])  # warm-up: indexes opened, caches filled
    stages: dict[str, list[float]] = defaultdict(list)
    for question in questions:
        clock.clear()
        clock.update(search=0.0, compose=0.0)
        started = time.perf_counter()
        encode(question)  # ask() encodes it too; timed here on its own
        encode_s = time.perf_counter() - started
        started = time.perf_counter()
        collection.ask(question)
        total = time.perf_counter() - started
        stages["encode"].append(encode_s)
        stages["search"].append(clock["search"])
        stages["compose"].append(clock["compose"])
        stages["rest"].append(total - encode_s - clock["search"] - clock["compose"])
        stages["total"].append(total)
    return {
        "questions": len(questions),
        **{
            f"{name}_ms": [
                round(statistics.median(v) * 1000, 1),
                round(percentile(v, 0.95) * 1000, 1),
            ]
            for name, v in stages.items()
        },
    }


def add_all(collection: Any, files: list[Path]) -> dict[str, object]:
    """Added as `articlebot add FILES...` adds them; then the same passages embedded alone."""
    from index.ingest.readers import read_path

    started = time.perf_counter()
    results = list(collection.add_many(functools.partial(read_path, f) for f in files))
    total = time.perf_counter() - started
    texts = [p.text for p in collection.store.passages(collection.name)]
    started = time.perf_counter()
    collection.model.embedder.encode_documents(texts)
    embed_s = time.perf_counter() - started
    paragraphs = sum(r.article.paragraphs for r in results)
    return {
        "paragraphs": paragraphs,
        "passages": len(texts),
        "add_s": round(total, 2),
        "paragraphs_per_s": round(paragraphs / total, 1),
        "embed_alone_s": round(embed_s, 2),
        "passages_per_s_embedding": round(len(texts) / embed_s, 1),
    }


def run_backend(
    backend: str, files: list[Path], questions: list[str], base: Path, clock: Clock
) -> None:
    from index import Library
    from index.embedding.embedder import load_embedder

    started = time.perf_counter()
    embedder = load_embedder(backend=backend, cache_dir=base / "models")  # type: ignore[arg-type]
    load_s = time.perf_counter() - started
    library = Library(base / f"data-{backend}", embedder=embedder)
    # The answer module caches sentence splits per passage; start each backend cold alike.
    import index.answers.compose

    cached = getattr(index.answers.compose, "_sentences", None)
    if cached is not None and hasattr(cached, "cache_clear"):
        cached.cache_clear()
    try:
        added = add_all(library.collection("squad"), files)
        sample = library.collection("sample")
        from index.ingest.readers import read_path

        sample.add(read_path(SAMPLE))
        figures = {
            "backend": embedder.backend,
            "model_load_s": round(load_s, 2),
            "adding": added,
            "sample_article": ask_all(sample, SAMPLE_QUESTIONS * 3, clock),
            "squad_dev": ask_all(library.collection("squad"), questions, clock),
        }
    finally:
        library.close()
    print(json.dumps(figures), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=1_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--backends", nargs="+", default=["onnx", "torch"])
    parser.add_argument("--models", type=Path, help="a models folder holding the ONNX export")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="articlebot-e2e-") as tmp:
        base = Path(tmp)
        if args.models:
            (base / "models").symlink_to(args.models.resolve(), target_is_directory=True)
        files = write_articles(base / "articles", args.paragraphs)
        questions = squad_questions(args.questions, args.paragraphs)
        clock: Clock = defaultdict(float)
        instrument(clock)
        for backend in args.backends:
            run_backend(backend, files, questions, base, clock)


if __name__ == "__main__":
    main()
