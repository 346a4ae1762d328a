"""The vector index (FAISS): the only module that imports faiss.

The index is derived data: SQLite holds the embeddings, so a missing or stale index file is
rebuilt from them. Each file carries the model name, dimension and row count, checked on load.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import faiss
import numpy as np

from .errors import IndexMismatch

__all__ = ["VectorIndex"]


class VectorIndex:
    """Inner-product search over L2-normalized vectors, addressed by passage id."""

    def __init__(self, index: faiss.Index, model: str, dim: int) -> None:
        self._index = index
        self.model = model
        self.dim = dim

    @classmethod
    def build(cls, vectors: np.ndarray, ids: np.ndarray, *, model: str, dim: int) -> VectorIndex:
        index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        vi = cls(index, model, dim)
        vi.add(vectors, ids)
        return vi

    @property
    def kind(self) -> str:
        return "flat"

    def __len__(self) -> int:
        return int(self._index.ntotal)

    def ids(self) -> set[int]:
        if len(self) == 0:
            return set()
        return set(faiss.vector_to_array(self._index.id_map).astype(np.int64).tolist())

    def add(self, vectors: np.ndarray, ids: np.ndarray) -> None:
        if len(ids) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32).reshape(-1, self.dim)
        self._index.add_with_ids(vectors, np.ascontiguousarray(ids, dtype=np.int64))

    def remove(self, ids: np.ndarray) -> None:
        if len(ids):
            self._index.remove_ids(np.ascontiguousarray(ids, dtype=np.int64))

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k (scores, ids) for one query vector; ids of -1 are empty slots."""
        if len(self) == 0 or k <= 0:
            return np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.int64)
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        scores, ids = self._index.search(q, min(k, len(self)))
        keep = ids[0] >= 0
        return scores[0][keep], ids[0][keep]

    def save(self, path: Path) -> None:
        """Write the index and its sidecar atomically: a crash leaves the old pair or the new."""
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {"model": self.model, "dim": self.dim, "count": len(self), "kind": self.kind}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        os.close(fd)
        try:
            faiss.write_index(self._index, tmp)
            os.replace(tmp, path)
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
        index = faiss.read_index(str(path))
        vi = cls(index, model, dim)
        if len(vi) != meta.get("count"):
            raise IndexMismatch(f"The index at {path} is incomplete; run `articlebot rebuild`.")
        return vi


def _write_json_atomic(path: Path, data: dict[str, object]) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)
