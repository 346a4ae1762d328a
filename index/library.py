"""A library: one data folder, the embedding model (loaded once), and its open collections."""

from __future__ import annotations

import threading
from pathlib import Path

from .collection import Collection
from .embedder import Backend, Embedder, load_embedder, model_dimension, model_name
from .sources import Limits
from .store import Store

__all__ = ["Library"]


class Library:
    """One data folder: the store, the model (loaded once), and the open collections."""

    def __init__(
        self,
        data_dir: Path,
        *,
        model_path: str | None = None,
        backend: Backend = "auto",
        limits: Limits | None = None,
        max_question_chars: int = 1_000,
        embedder: Embedder | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.store = Store(self.data_dir / "articlebot.db")
        self.limits = limits or Limits()
        self.max_question_chars = max_question_chars
        self._model_path = model_path
        self._backend = backend
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._collections: dict[str, Collection] = {}
        self._collections_lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = load_embedder(
                    self._model_path, self._backend, self.data_dir / "models"
                )
            return self._embedder

    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder else model_name(self._model_path)

    def embedder_dim(self) -> int:
        """The model's vector size, read from its files if the model is not loaded yet."""
        return self._embedder.dim if self._embedder else model_dimension(self._model_path)

    def collection(self, name: str = "default") -> Collection:
        name = name.strip() or "default"
        with self._collections_lock:
            if name not in self._collections:
                self._collections[name] = Collection(self, name)
            return self._collections[name]

    def close(self) -> None:
        self.store.close()
