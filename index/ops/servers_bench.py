"""`articlebot bench --collections N --passages-per-collection M`: many servers in one process.

It fills N collections (one per Discord server) of M passages each, as adds would have left
them (rows in SQLite, a FAISS file each), then opens them afresh as a restarted bot would, asks
one question in each, and reports the process's memory and how long each first and warm
question took. Passage texts are made of pseudo-words and their vectors are synthetic
(index_bench.py), so no passage is embedded; each question goes through the real model and the
real answer path.
"""

from __future__ import annotations

import gc
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from index.embedding.embedder import Embedder
from index.ingest.paragraphs import content_hash
from index.library import Library
from index.ops.index_bench import peak_rss_mb, synthetic_vectors
from index.records import Document

__all__ = ["ServersResult", "run_servers_bench"]

WORDS_A_PASSAGE = 40
VOCABULARY = 5_000
# Warm questions are asked again in this many of the collections last opened.
WARM = 100


@dataclass(frozen=True)
class ServersResult:
    collections: int
    passages: int
    rss_mb: float
    first_ask_p50_ms: float
    first_ask_p99_ms: float
    warm_ask_p50_ms: float

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _vocabulary(rng: np.random.Generator) -> list[str]:
    syllables = ["ka", "lo", "mi", "re", "su", "ta", "ne", "vo", "di", "ba", "po", "gu", "fe"]
    words = {"".join(rng.choice(syllables, size=rng.integers(2, 5))) for _ in range(VOCABULARY)}
    return sorted(words)


def _current_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return peak_rss_mb()  # not Linux: the peak is the closest figure


def _fill(folder: Path, embedder: Embedder, collections: int, per: int, seed: int) -> list[str]:
    """Store the collections as adds would, FAISS files included; returns one question each."""
    rng = np.random.default_rng(seed)
    words = _vocabulary(rng)
    questions = []
    library = Library(folder, embedder=embedder)
    try:
        for n in range(collections):
            name = f"guild-{n}"
            texts = [
                " ".join(rng.choice(words, size=WORDS_A_PASSAGE)).capitalize() + "."
                for _ in range(per)
            ]
            doc = Document(f"Article {n}", texts, source="bench")
            vectors = synthetic_vectors(per, embedder.dim, seed=seed + n)
            library.store.set_collection_model(name, embedder.name, embedder.dim)
            passages = [(i + 1, 0, text) for i, text in enumerate(texts)]
            library.store.insert_article(name, doc, content_hash(texts), passages, vectors, None)
            backend = library.collection(name).backend
            backend.changed()  # the index file an add saves
            backend.unload()
            asked = texts[int(rng.integers(per))].split()[:4]
            questions.append(f"What about {' '.join(asked).lower()}?")
    finally:
        library.close()
    return questions


def run_servers_bench(
    embedder: Embedder,
    collections: int,
    per_collection: int,
    *,
    index_memory_bytes: int,
    seed: int = 0,
) -> ServersResult:
    with tempfile.TemporaryDirectory(prefix="articlebot-bench-") as tmp:
        folder = Path(tmp)
        questions = _fill(folder, embedder, collections, per_collection, seed)
        gc.collect()
        library = Library(folder, embedder=embedder, index_memory_bytes=index_memory_bytes)
        try:
            first = []
            for n, question in enumerate(questions):
                started = time.perf_counter()
                library.collection(f"guild-{n}").ask(question)
                first.append(time.perf_counter() - started)
            warm = []
            for n in range(max(0, collections - WARM), collections):
                started = time.perf_counter()
                library.collection(f"guild-{n}").ask(questions[n])
                warm.append(time.perf_counter() - started)
            rss = _current_rss_mb()
        finally:
            library.close()
    return ServersResult(
        collections=collections,
        passages=collections * per_collection,
        rss_mb=round(rss, 1),
        first_ask_p50_ms=round(statistics.median(first) * 1000, 2),
        first_ask_p99_ms=round(float(np.percentile(first, 99)) * 1000, 2),
        warm_ask_p50_ms=round(statistics.median(warm) * 1000, 2),
    )
