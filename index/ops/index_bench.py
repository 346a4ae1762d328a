"""`articlebot bench`: how the vector index holds up as a collection grows, without the model.

It builds the index a collection of N passages would get (`VectorIndex.build`), asks it
single queries one at a time through `VectorIndex.search`, and compares each top 10 with exact
search over the same vectors.

The vectors are synthetic. Uniform random unit vectors would be the worst case for any
approximate index (in 384 dimensions every pair is about equally far apart), which real
embeddings are not: they gather by topic and article, and spread over few directions. So the
default data are clustered: topics, articles within topics, passages within articles, drawn
from a decaying spectrum; and each query is a passage plus noise, the way a question sits near
the paragraph that answers it. `data="uniform"` gives the worst case for comparison.
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from index.search.vectors import IndexKind, VectorIndex, exact_search

__all__ = [
    "BenchResult",
    "DataKind",
    "run_bench",
    "run_database_bench",
    "synthetic_chunks",
    "synthetic_queries",
    "synthetic_vectors",
]

DataKind = Literal["clustered", "uniform"]

# The clustered data are a hierarchy: topics of 4,000 passages, articles of 40, sections of 5.
# Each level adds a direction of the weight given; OWN_WEIGHT is the passage's own direction.
# Fitted to real all-MiniLM-L6-v2 int8 embeddings of the 2,067 SQuAD dev paragraphs and 600 of
# their questions, compared at the same size (mean cosines; the last line is how many
# directions the variance spreads over):
#                                  real   synthetic
#   question to its best passage   0.612  0.705
#   question to its 10th passage   0.421  0.400
#   10th minus 11th                0.007  0.005   (smaller is harder for approximate search)
#   passage to its nearest other   0.658  0.694
#   passage to its 10th nearest    0.492  0.524
#   participation ratio             85     85
LEVELS = ((4_000, 0.6), (40, 0.7), (5, 0.6))
OWN_WEIGHT = 0.8
SPECTRUM_POWER = 0.35
# Noise added to a passage to make a question about it.
QUERY_NOISE = 1.0
_CHUNK = 65_536
# Exact scores of this many passages against every query at once (2,000 queries: 64 MB).
_TRUTH_SLICE = 8_192


@dataclass(frozen=True)
class BenchResult:
    passages: int
    index: str
    build_s: float
    p50_ms: float
    p99_ms: float
    recall_at_10: float
    rss_mb: float

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def _spectrum(dim: int) -> np.ndarray:
    # Real sentence embeddings put more variance in some directions than in others.
    return (np.arange(1, dim + 1, dtype=np.float32) ** -SPECTRUM_POWER).astype(np.float32)


def _normalize(x: np.ndarray) -> np.ndarray:
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    return x


def _directions(rng: np.random.Generator, n: int, scale: np.ndarray) -> np.ndarray:
    return _normalize(rng.standard_normal((n, len(scale)), dtype=np.float32) * scale)


def synthetic_vectors(
    n: int, dim: int, *, seed: int = 0, data: DataKind = "clustered"
) -> np.ndarray:
    """n unit vectors (float32)."""
    out = np.empty((n, dim), dtype=np.float32)
    start = 0
    for chunk in synthetic_chunks(n, dim, seed=seed, data=data):
        out[start : start + len(chunk)] = chunk
        start += len(chunk)
    return out


def synthetic_chunks(
    n: int, dim: int, *, seed: int = 0, data: DataKind = "clustered"
) -> Iterator[np.ndarray]:
    """The same n vectors as `synthetic_vectors`, made and handed over a chunk at a time."""
    rng = np.random.default_rng(seed)
    scale = _spectrum(dim) if data == "clustered" else np.ones(dim, dtype=np.float32)
    levels = [(size, weight, _directions(rng, max(1, n // size), scale)) for size, weight in LEVELS]
    for start in range(0, n, _CHUNK):
        stop = min(n, start + _CHUNK)
        chunk = _directions(rng, stop - start, scale)
        if data == "clustered":
            rows = np.arange(start, stop)
            chunk *= OWN_WEIGHT
            for size, weight, centres in levels:
                chunk += weight * centres[rows // size % len(centres)]
        yield _normalize(chunk)


def synthetic_queries(vectors: np.ndarray, count: int, *, seed: int = 1) -> np.ndarray:
    """Queries near random passages, as a question sits near the paragraph that answers it."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(vectors), count)
    return _near(vectors[rows], rng)


def _near(passages: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    noise = _directions(rng, len(passages), _spectrum(passages.shape[1]))
    return _normalize(passages + QUERY_NOISE * noise)


def _queries_and_truth(
    passages: int, dim: int, queries: int, seed: int, data: DataKind
) -> tuple[np.ndarray, np.ndarray]:
    """Queries over the synthetic passages and each one's exact top 10, passing over the
    passages a chunk at a time (a million of them would take 1.5 GB at once)."""
    rng = np.random.default_rng(seed + 1)
    if data == "clustered":  # near passages drawn first, picked up as their chunk goes by
        rows = rng.integers(0, passages, queries)
        near = np.zeros((queries, dim), dtype=np.float32)
        start = 0
        for chunk in synthetic_chunks(passages, dim, seed=seed, data=data):
            inside = (rows >= start) & (rows < start + len(chunk))
            near[inside] = chunk[rows[inside] - start]
            start += len(chunk)
        asked = _near(near, rng)
    else:
        asked = synthetic_vectors(queries, dim, seed=seed + 1, data="uniform")
    best_scores = np.full((queries, 10), -np.inf, dtype=np.float32)
    best_rows = np.zeros((queries, 10), dtype=np.int64)
    start = 0
    for chunk in synthetic_chunks(passages, dim, seed=seed, data=data):
        for lo in range(0, len(chunk), _TRUTH_SLICE):  # scores of one slice at a time
            part = chunk[lo : lo + _TRUTH_SLICE]
            rows_here = exact_search(part, asked, min(10, len(part)))
            scores_here = np.take_along_axis(asked @ part.T, rows_here, axis=1)
            scores = np.hstack([best_scores, scores_here])
            found = np.hstack([best_rows, rows_here + start + lo])
            keep = np.argsort(-scores, axis=1, kind="stable")[:, :10]
            best_scores = np.take_along_axis(scores, keep, axis=1)
            best_rows = np.take_along_axis(found, keep, axis=1)
        start += len(chunk)
    return asked, best_rows


def peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports kilobytes, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def run_bench(
    passages: int,
    *,
    dim: int,
    queries: int = 2_000,
    seed: int = 0,
    data: DataKind = "clustered",
    kind: IndexKind | None = None,
) -> BenchResult:
    """Build the index for `passages` synthetic vectors and time `queries` single searches.

    The vectors are made chunk by chunk, as the store hands them to a rebuild: memory holds
    the index, never all the float32 vectors at once."""
    asked, truth = _queries_and_truth(passages, dim, queries, seed, data)

    def batches() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        start = 0
        for chunk in synthetic_chunks(passages, dim, seed=seed, data=data):
            yield np.arange(start, start + len(chunk), dtype=np.int64), chunk
            start += len(chunk)

    started = time.perf_counter()
    index = VectorIndex.build_from(batches, passages, model="bench", dim=dim, kind=kind)
    build_s = time.perf_counter() - started
    times = np.zeros(queries)
    found = 0
    for i, query in enumerate(asked):
        started = time.perf_counter()
        _, ids = index.search(query, 10)
        times[i] = time.perf_counter() - started
        found += len(np.intersect1d(ids, truth[i]))
    return BenchResult(
        passages=passages,
        index=index.kind,
        build_s=round(build_s, 2),
        p50_ms=round(float(np.percentile(times, 50)) * 1000, 3),
        p99_ms=round(float(np.percentile(times, 99)) * 1000, 3),
        recall_at_10=round(found / (10 * queries), 4),
        rss_mb=round(peak_rss_mb(), 1),
    )


def run_database_bench(
    passages: int, url: str, *, dim: int, queries: int = 500, seed: int = 0
) -> BenchResult:
    """The same synthetic passages in PostgreSQL (collection `bench-N`, kept between runs),
    searched the way a question is (`PgBackend.dense`): exact up to EXACT_LIMIT, HNSW past it.

    `build_s` is the time to store them: copied in, the vector index built after the rows when
    the database held none (`PgStore.bulk_load`); `rss_mb` is this process's, the database's
    memory is the server's."""
    from index.records import Document
    from index.storage.postgres import PgBackend, PgStore

    asked, truth = _queries_and_truth(passages, dim, queries, seed, "clustered")
    store = PgStore(url, dim)
    name = f"bench-{passages}-{seed}"
    try:
        started = time.perf_counter()
        if store.count(name)[1] != passages:
            for article in store.list_articles(name):
                store.delete_article(name, article.id)
            store.set_collection_model(name, "bench", dim)
            start = 0
            with store.bulk_load(dim):
                for chunk in synthetic_chunks(passages, dim, seed=seed):
                    for lo in range(0, len(chunk), 1_000):  # articles of a thousand passages
                        part = chunk[lo : lo + 1_000]
                        rows = range(start + lo, start + lo + len(part))
                        texts = [f"passage {row}" for row in rows]
                        doc = Document(f"bench {rows[0]}", texts, source="bench")
                        cut = [(i + 1, 0, text) for i, text in enumerate(texts)]
                        store.insert_article(name, doc, f"bench-{rows[0]}", cut, part, None)
                    start += len(chunk)
        build_s = time.perf_counter() - started
        # Stored ids are the database's; passage texts name the synthetic row each one holds.
        backend = PgBackend(store, name)
        row_of = {p.id: int(p.text.split()[1]) for p in store.passages(name)}
        times = np.zeros(queries)
        found = 0
        for i, query in enumerate(asked):
            started = time.perf_counter()
            _, ids = backend.dense(query, 10)
            times[i] = time.perf_counter() - started
            found += len(np.intersect1d([row_of[int(pid)] for pid in ids], truth[i]))
        kind = backend.state().kind
    finally:
        store.close()
    return BenchResult(
        passages=passages,
        index=f"postgresql-{kind}",
        build_s=round(build_s, 2),
        p50_ms=round(float(np.percentile(times, 50)) * 1000, 3),
        p99_ms=round(float(np.percentile(times, 99)) * 1000, 3),
        recall_at_10=round(found / (10 * queries), 4),
        rss_mb=round(peak_rss_mb(), 1),
    )
