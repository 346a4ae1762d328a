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
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np

from .vectors import IndexKind, VectorIndex, exact_search

__all__ = ["BenchResult", "DataKind", "run_bench", "synthetic_queries", "synthetic_vectors"]

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
    """n unit vectors (float32), made in chunks so that memory stays at the result's size."""
    rng = np.random.default_rng(seed)
    out = np.empty((n, dim), dtype=np.float32)
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
        out[start:stop] = _normalize(chunk)
    return out


def synthetic_queries(vectors: np.ndarray, count: int, *, seed: int = 1) -> np.ndarray:
    """Queries near random passages, as a question sits near the paragraph that answers it."""
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(vectors), count)
    noise = _directions(rng, count, _spectrum(vectors.shape[1]))
    return _normalize(vectors[rows] + QUERY_NOISE * noise)


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
    """Build the index for `passages` synthetic vectors and time `queries` single searches."""
    vectors = synthetic_vectors(passages, dim, seed=seed, data=data)
    asked = (
        synthetic_queries(vectors, queries, seed=seed + 1)
        if data == "clustered"
        else synthetic_vectors(queries, dim, seed=seed + 1, data="uniform")
    )
    truth = exact_search(vectors, asked, 10)
    started = time.perf_counter()
    index = VectorIndex.build(
        vectors, np.arange(passages, dtype=np.int64), model="bench", dim=dim, kind=kind
    )
    build_s = time.perf_counter() - started
    del vectors  # the index holds what search needs
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
