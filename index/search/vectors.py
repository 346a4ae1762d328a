"""The vector index (FAISS): the only module that imports faiss.

The index is derived data: SQLite holds the embeddings, so a missing or stale index file is
rebuilt from them. Each file carries the model name, dimension and row count, checked on load,
and the kind of index with the parameters it was built with.

Two kinds, chosen by size in `VectorIndex.build`:

- `flat`: exact search (IndexFlatIP in IndexIDMap2). Exact, cheap to build, and fast enough
  while a collection is small; its time per query grows with every passage.
- `ivf`: an inverted file (IndexIVFScalarQuantizer) whose lists hold 8-bit scalar-quantized
  vectors, a quarter of float32's memory. A query scans `nprobe` of `nlist` lists, so its
  time grows with about the square root of the collection. IVF removes ids natively, so removal
  needs no tombstones. It is trained for a size: once a collection grows far past it (or
  shrinks back to flat size), `suits` says so and the caller rebuilds from SQLite.
"""

from __future__ import annotations

import errno
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, cast

import faiss
import numpy as np

from index.errors import IndexMismatch

__all__ = ["IndexKind", "IndexParams", "VectorIndex", "exact_search"]

IndexKind = Literal["flat", "ivf"]

# Exact search up to here. One query, 384 dimensions, on this machine's 2 busy cores: 2.3 ms
# at 20,000 vectors, 6.7 ms at 50,000, 12 ms at 100,000; IVF takes about 2 ms at 50,000 to
# 100,000 and 5 ms at 1M, and finds 96-99% of the true top 10 (see `articlebot bench`).
FLAT_LIMIT = 30_000
# An IVF index trained for n vectors is rebuilt once it holds this many times n: its lists
# grow long and queries slow down.
REGROW = 4
# Training on 40 points per list (FAISS's minimum advice is 39) keeps 1M-vector builds short.
TRAIN_POINTS_PER_LIST = 40
# Lists scanned per query: 9/128 of them gives recall@10 0.973 at 1M vectors, p50 4.8 ms on 2
# busy cores (3/64: 0.962 and 4.1 ms; 1/16: 0.970 and 4.9 ms; 5/64: 0.975 and 6.6 ms), and
# scanning at least 20,000 vectors (about 2 ms) keeps recall near 0.99 in mid-sized
# collections, where that is cheap. See `articlebot bench`.
NPROBE_SHARE = 9 / 128
MIN_SCANNED = 20_000


@dataclass(frozen=True)
class IndexParams:
    """What built an index, saved in its sidecar so a loaded index searches the same way."""

    kind: IndexKind
    nlist: int = 0
    nprobe: int = 0
    trained_for: int = 0

    @classmethod
    def for_size(cls, count: int, kind: IndexKind | None = None) -> IndexParams:
        """The index for `count` vectors: flat up to FLAT_LIMIT unless `kind` says otherwise."""
        if kind == "flat" or kind is None and count <= FLAT_LIMIT:
            return cls("flat")
        # About 4 * sqrt(n) lists, a power of two (1,024 at 50k vectors, 4,096 at 1M), and
        # never fewer than 39 training points a list, below which k-means is unreliable.
        nlist = 2 ** round(math.log2(4 * math.sqrt(max(count, 1))))
        nlist = max(1, min(nlist, 2 ** int(math.log2(max(count // 39, 1)))))
        per_list = max(count, 1) / nlist
        nprobe = min(nlist, max(round(nlist * NPROBE_SHARE), math.ceil(MIN_SCANNED / per_list)))
        return cls("ivf", nlist=nlist, nprobe=nprobe, trained_for=count)


class VectorIndex:
    """Inner-product search over L2-normalized vectors, addressed by passage id."""

    def __init__(self, index: faiss.Index, model: str, dim: int, params: IndexParams) -> None:
        self._index: Any = index  # IndexIDMap2 or IndexIVFScalarQuantizer, by `params.kind`
        self.model = model
        self.dim = dim
        self.params = params

    @classmethod
    def build(
        cls,
        vectors: np.ndarray,
        ids: np.ndarray,
        *,
        model: str,
        dim: int,
        kind: IndexKind | None = None,
    ) -> VectorIndex:
        """The index that suits this many vectors (or the `kind` asked for), filled with them."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, dim)
        return cls.build_from(
            lambda: iter([(ids, vectors)]), len(vectors), model=model, dim=dim, kind=kind
        )

    @classmethod
    def build_from(
        cls,
        batches: Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]],
        count: int,
        *,
        model: str,
        dim: int,
        kind: IndexKind | None = None,
    ) -> VectorIndex:
        """The index for `count` vectors, read as (ids, vectors) batches, never all at once: a
        million float32 vectors are 1.5 GB, four times what the IVF index keeps of them.

        `batches()` is called twice for an IVF index: once for its training sample, once to
        fill it."""
        params = IndexParams.for_size(count, kind)
        if params.kind == "flat":
            vi = cls(faiss.IndexIDMap2(faiss.IndexFlatIP(dim)), model, dim, params)
        else:
            vi = cls(
                _trained_ivf(
                    _sample(batches(), count, params.nlist * TRAIN_POINTS_PER_LIST, dim),
                    dim,
                    params,
                ),
                model,
                dim,
                params,
            )
        for ids, vectors in batches():
            vi.add(vectors, ids)
        return vi

    @property
    def kind(self) -> IndexKind:
        return self.params.kind

    def suits(self, count: int) -> bool:
        """Whether this index still fits a collection of `count` vectors, or wants a rebuild."""
        if self.kind == "flat":
            return count <= FLAT_LIMIT
        # Down to half the flat limit: adding and removing around the limit must not flap.
        return FLAT_LIMIT // 2 < count <= self.params.trained_for * REGROW

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def nbytes(self) -> int:
        """About how much memory the index holds: 4 bytes a dimension flat, 1 in IVF's 8 bits,
        and the id map beside the vectors."""
        per_vector = self.dim * (4 if self.kind == "flat" else 1) + 16
        return len(self) * per_vector

    def ids(self) -> set[int]:
        if len(self) == 0:
            return set()
        if self.kind == "flat":
            return set(faiss.vector_to_array(self._index.id_map).astype(np.int64).tolist())
        lists = self._index.invlists
        parts = [
            faiss.rev_swig_ptr(lists.get_ids(i), lists.list_size(i)).copy()
            for i in range(lists.nlist)
            if lists.list_size(i)
        ]
        return set(np.concatenate(parts).tolist())

    def add(self, vectors: np.ndarray, ids: np.ndarray) -> None:
        if len(ids) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        self._index.add_with_ids(vectors, np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        if len(ids):
            # IDSelectorBatch looks ids up in a hash set, not a scan per id.
            selector = faiss.IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))
            self._index.remove_ids(selector)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) for one query vector; ids of -1 are empty slots."""
        if len(self) == 0 or k <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        with _one_thread():
            scores, ids = self._index.search(q, min(k, len(self)))
        keep = ids[0] >= 0
        return scores[0][keep], ids[0][keep]

    def save(self, path: Path) -> None:
        """Write the index and its sidecar atomically: a crash leaves the old pair or the new."""
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"model": self.model, "dim": self.dim, "count": len(self), **asdict(self.params)}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        try:
            faiss.write_index(self._index, tmp)
            os.replace(tmp, path)
        except RuntimeError as exc:
            # faiss reports a failed write as a RuntimeError ending in the C library's reason
            # ("No space left on device"); as an OSError, callers treat it as any failed write.
            code = errno.ENOSPC if "No space left" in str(exc) else errno.EIO
            raise OSError(code, os.strerror(code), tmp) from exc
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        _write_json_atomic(path.with_suffix(".json"), meta)

    @classmethod
    def load(cls, path: Path, *, model: str, dim: int) -> VectorIndex:
        meta = json.loads(path.with_suffix(".json").read_text())
        if meta.get("model") != model or meta.get("dim") != dim:
            raise IndexMismatch(
                f"The index at {path} was built with {meta.get('model')} ({meta.get('dim')} "
                f"dimensions), not {model} ({dim}); run `articlebot rebuild --reembed`."
            )
        params = _params(meta)
        index: Any = faiss.read_index(str(path))
        if params.kind == "ivf":
            index.nprobe = params.nprobe
        vi = cls(index, model, dim, params)
        if len(vi) != meta.get("count"):
            raise IndexMismatch(f"The index at {path} is incomplete; run `articlebot rebuild`.")
        return vi


@contextmanager
def _one_thread() -> Iterator[None]:
    """One query gains nothing from FAISS's OpenMP threads, and on a busy machine waking them
    costs more than the search (24 ms instead of 2 for 20,000 vectors, measured here). The
    setting is the calling thread's own, so a build in another thread keeps its threads."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def exact_search(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Row numbers of each query's k best vectors by exact inner product (for benchmarks)."""
    x = np.ascontiguousarray(vectors, dtype=np.float32)
    q = np.ascontiguousarray(queries, dtype=np.float32)
    _, rows = faiss.knn(q, x, k, metric=faiss.METRIC_INNER_PRODUCT)
    return cast(np.ndarray, rows)


def _trained_ivf(sample: np.ndarray, dim: int, params: IndexParams) -> faiss.Index:
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(
        quantizer, dim, params.nlist, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    index.cp.max_points_per_centroid = TRAIN_POINTS_PER_LIST
    index.cp.niter = 10  # k-means converges well enough for search within ten rounds
    index.cp.seed = 1234  # the same vectors give the same index, build after build
    index.cp.spherical = True  # centroids of unit vectors, compared by inner product
    index.train(sample)
    index.nprobe = params.nprobe
    return index


def _sample(
    batches: Iterator[tuple[np.ndarray, np.ndarray]], count: int, size: int, dim: int
) -> np.ndarray:
    """`size` of the `count` vectors, drawn the same way build after build."""
    rows = np.sort(np.random.default_rng(1234).choice(count, min(size, count), replace=False))
    taken, start = [], 0
    for _, vectors in batches:
        stop = start + len(vectors)
        lo, hi = np.searchsorted(rows, [start, stop])
        taken.append(np.asarray(vectors[rows[lo:hi] - start], dtype=np.float32))
        start = stop
    return np.vstack(taken) if taken else np.zeros((0, dim), np.float32)


def _params(meta: dict[str, object]) -> IndexParams:
    kind = meta.get("kind", "flat")
    if kind not in ("flat", "ivf"):
        raise IndexMismatch(f"The index kind {kind!r} is unknown here; run `articlebot rebuild`.")
    return IndexParams(
        cast(IndexKind, kind),
        nlist=int(cast(int, meta.get("nlist", 0))),
        nprobe=int(cast(int, meta.get("nprobe", 0))),
        trained_for=int(cast(int, meta.get("trained_for", 0))),
    )


def _write_json_atomic(path: Path, data: dict[str, object]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    finally:  # a failed write (a full disk) leaves no temp file behind
        if os.path.exists(tmp):
            os.unlink(tmp)
