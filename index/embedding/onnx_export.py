"""The int8 ONNX export: which int8 kernels this CPU runs, and each export, made once and cached.

An export is keyed by the model's files, the recipe and the CPU's kernel set (`onnx_folder`);
it is made in a temporary folder and renamed into place whole, under a lock (`export_once`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import platform
import shutil
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal

from index.errors import BadInput
from index.storage.locking import file_lock

__all__ = [
    "MANIFEST",
    "SENTENCEPIECE_FILE",
    "TOKENIZERS_FILE",
    "Quantization",
    "complete_export",
    "export_model",
    "export_once",
    "exported_model",
    "onnx_folder",
    "quantization_target",
    "recipe_key",
    "write_manifest",
]

log = logging.getLogger(__name__)

Quantization = Literal["avx512_vnni", "avx512", "avx2", "arm64"]

MANIFEST = "embedder.json"
# The tokenizer files an export may carry: the source's `tokenizers` file, or a SentencePiece
# model its maker wrote (e5_weights.py), which the runtime reads with SentencePiece.
TOKENIZERS_FILE = "tokenizer.json"
SENTENCEPIECE_FILE = "sentencepiece.model"
# Part of an export's cache key: a change of recipe exports again rather than reuse the old.
_EXPORT_RECIPE = "dynamic-int8, 7-bit weights on x86-64, weights in a file beside the graph"
# The weights' file, beside model.onnx, which ONNX Runtime maps into memory rather than reads.
WEIGHTS_FILE = "model.onnx.data"
# Each large weight starts on a boundary of this many bytes (a page on every kernel, 4 KiB or
# 64 KiB): ONNX Runtime maps a weight only where it starts on one, and copies the others.
_WEIGHT_ALIGNMENT = 1 << 16


def exported_model(
    source: Path,
    cache_dir: Path,
    name: str,
    target: Quantization | None = None,
    earlier: Sequence[Path] = (),
) -> Path:
    """The folder of the model's int8 export for `target` (this CPU's if None): in `cache_dir`,
    else in one of the `earlier` folders, else made in `cache_dir`."""
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
    found = complete_export(folder.name, cache_dir, earlier)
    if found is not None and found != folder:
        return found
    if found is None or _dead_exports(folder):
        # exports, or only clears what a killed export left
        export_once(folder, lambda work: _export_into(source, work, target), name)
    return folder


def complete_export(name: str, cache_dir: Path, earlier: Sequence[Path] = ()) -> Path | None:
    """The complete export folder `name` in `cache_dir` or, failing that, the first of the
    `earlier` folders that holds one; None where none does."""
    for where in (cache_dir, *earlier):
        if (where / name / MANIFEST).exists():
            return where / name
    return None


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


def recipe_key(model_key: str) -> str:
    """A key for an export of the model known by `model_key`: changes with the recipe too."""
    return hashlib.sha1(f"{model_key}:{_EXPORT_RECIPE}".encode()).hexdigest()[:10]


def onnx_folder(cache_dir: Path, source: Path, name: str, target: Quantization) -> Path:
    """Where the int8 export of this model for this CPU lives: keyed by model and config."""
    return cache_dir / f"{name}-int8-{target}-{_fingerprint(source)}"


def export_once(folder: Path, make: Callable[[Path], None], what: str) -> None:
    """Export and quantize `what` once: `make` builds the export in a temporary folder, which
    is renamed into place whole.

    A lock makes a second process wait for the first export rather than repeat it; the rename
    means no process ever sees half a folder, even if the exporter is killed.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(folder.with_name(folder.name + ".lock")):
        for dead in _dead_exports(folder):  # a killed exporter's; a live one holds the lock
            shutil.rmtree(dead, ignore_errors=True)
        if (folder / MANIFEST).exists():
            return  # another process exported it while this one waited
        log.warning("Exporting %s to int8 ONNX, once (under a minute)", what)
        work = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
        try:
            make(work)
            work.chmod(0o755)  # mkdtemp makes it private; the bot and the CLI may differ in user
            os.rename(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)


def _dead_exports(folder: Path) -> list[Path]:
    return [p for p in folder.parent.glob(f".{folder.name}-*") if p.is_dir()]


def _export_into(source: Path, work: Path, target: Quantization) -> None:
    """The export of a sentence-transformers folder (all-MiniLM-L6-v2's)."""
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
    _weights_beside(work / "model.onnx")
    shutil.copy(source / TOKENIZERS_FILE, work / TOKENIZERS_FILE)
    shutil.rmtree(work / "export")
    write_manifest(
        work,
        source=str(source),
        tokenizer=TOKENIZERS_FILE,
        quantization=target,
        dim=model.get_embedding_dimension(),
        max_seq_length=model.max_seq_length,
        pooling=_pooling_mode(source),
        prompts={k: v for k, v in model.prompts.items() if k in ("query", "document")},
    )


def export_model(
    model: Any,
    work: Path,
    target: Quantization,
    float_nodes: Sequence[str] = (),
    *,
    table_apart: bool = True,
) -> None:
    """Write `model` (a transformers model in memory) into `work` as int8 ONNX: `model.onnx`,
    its weights beside it. The graph is the one sentence-transformers' ONNX backend exports
    from a folder (optimum's, for the feature-extraction task) and is quantized the same way,
    without writing the float32 model as a folder and loading it back first. `float_nodes`
    names the graph's nodes that stay in float32 (where int8 reads a model's activations badly).

    `table_apart` (see `_TokenTable`) keeps the model's token table out of the exporter and the
    quantizer, and leaves the model with a stand-in of a few rows in its place: the model is
    spent. The export is the same, byte for byte (`tests/embedding/test_onnx_export.py`).
    """
    from optimum.exporters.onnx import onnx_export_from_model
    from optimum.onnxruntime import ORTQuantizer
    from torch.jit import TracerWarning

    config = _quantization_config(target, float_nodes)
    table = _TokenTable.take(model, config) if table_apart and _table_alone(model) else None
    float32, quantized = work / "float32", work / "quantized"
    with warnings.catch_warnings():
        # The tracer's note that the attention mask's constant is fixed in the graph: it is,
        # and rightly (1.0, the same for every input).
        warnings.simplefilter("ignore", TracerWarning)
        onnx_export_from_model(
            model, float32, task="feature-extraction", do_validation=False, no_post_process=True
        )
    ORTQuantizer.from_pretrained(float32).quantize(config, quantized)
    (made,) = quantized.glob("*.onnx")
    os.replace(made, work / "model.onnx")
    shutil.rmtree(float32)
    shutil.rmtree(quantized)
    if float_nodes:  # a node name the exporter no longer makes would be quantized unnoticed
        import onnx

        graph = onnx.load(str(work / "model.onnx"), load_external_data=False).graph
        missing = set(float_nodes) - {n.name for n in graph.node if n.op_type == "MatMul"}
        if missing:
            raise ValueError(f"the export has no node {sorted(missing)[0]} to keep in float32")
    _weights_beside(work / "model.onnx", table)


def _table_alone(model: Any) -> bool:
    """Whether the model reads its token table only as its token table: one tied to an output
    layer goes through the exporter whole. (A function of its own, so that no reference to the
    table outlives the question: held through the export, it kept 384 MB resident.)"""
    weight = model.get_input_embeddings().weight
    return sum(p is weight for _, p in model.named_parameters(remove_duplicate=False)) == 1


@dataclasses.dataclass(frozen=True)
class _TokenTable:
    """A model's token table, quantized apart from its graph.

    A token table is only ever read a row at a time, yet the exporter and the quantizer copy
    every weight of a graph several times over: e5's table (250,037 rows, 384 MB in float32)
    made most of its export's 4.0 GB at the peak, more than a small server has. So the graph
    is exported and quantized with a stand-in of `STAND_IN_ROWS` rows, and the table, quantized
    here as the quantizer quantizes a Gather's table (as an activation: 8 bits over the whole
    table's range, no reduced range), takes the stand-in's place as the weights are written.
    """

    STAND_IN_ROWS: ClassVar[int] = 8
    SLICE_ROWS: ClassVar[int] = 16384

    name: str  # the table's weight in the graph, before the quantizer's suffixes
    quantized: Any  # numpy arrays: the table's 8-bit rows, its zero point and scale
    zero_point: Any
    scale: Any

    @classmethod
    def take(cls, model: Any, config: Any) -> _TokenTable:
        import numpy as np
        import onnx
        import torch
        from onnx import TensorProto
        from onnxruntime.quantization import QuantType
        from onnxruntime.quantization.quant_utils import compute_data_quant_params, quantize_nparray

        embeddings = model.get_input_embeddings()
        (name,) = [n for n, p in model.named_parameters() if p is embeddings.weight]
        # The quantizer reads a Gather's table as an activation: of the activations' type, and
        # symmetric as they are, unless that type is the weights' too, when it is symmetric
        # as the weights are (quantize_initializer_impl).
        qtype = (
            TensorProto.UINT8 if config.activations_dtype == QuantType.QUInt8 else TensorProto.INT8
        )
        symmetric = (
            config.weights_symmetric
            if config.activations_dtype == config.weights_dtype
            else config.activations_symmetric
        )
        table = embeddings.weight.detach().numpy()
        # The quantizer's own arithmetic (quantize_data), a slice of rows at a time: it is
        # elementwise once the whole table's range is known, and whole it held two more
        # float32 copies of the table.
        zero_point, scale = compute_data_quant_params(table, qtype, symmetric)
        quantized = np.empty(table.shape, onnx.helper.tensor_dtype_to_np_dtype(qtype))
        for start in range(0, len(table), cls.SLICE_ROWS):
            rows = slice(start, start + cls.SLICE_ROWS)
            quantized[rows] = quantize_nparray(qtype, table[rows], scale, zero_point)
        # The stand-in: the table's first rows, and a vocabulary of as many, which the
        # exporter's sample inputs are drawn from.
        stand_in = embeddings.weight.detach()[: cls.STAND_IN_ROWS].clone()
        embeddings.weight = torch.nn.Parameter(stand_in, requires_grad=False)
        model.config.vocab_size = cls.STAND_IN_ROWS
        return cls(name, np.asarray(quantized), np.asarray(zero_point), np.asarray(scale))

    def replace(self, initializers: Any) -> None:
        """Put the table in place of the stand-in among a quantized graph's `initializers`."""
        from onnx import helper, numpy_helper

        found = {t.name: t for t in initializers}
        if self.name in found:  # read in float32 somewhere: it would be the stand-in's rows
            raise ValueError(f"the export reads {self.name} unquantized; export it whole")
        values = {
            "_quantized": self.quantized,
            "_zero_point": self.zero_point,
            "_scale": self.scale,
        }
        for suffix, value in values.items():
            tensor = found.get(self.name + suffix)
            if tensor is None:
                raise ValueError(f"the export has no {self.name + suffix} to put the table in")
            # Scalars written as the quantizer writes them (helper.make_tensor's typed fields,
            # not raw bytes): the same graph file, byte for byte.
            tensor.CopyFrom(
                numpy_helper.from_array(value, tensor.name)
                if value.ndim
                else helper.make_tensor(tensor.name, tensor.data_type, [], [value.item()])
            )


def write_manifest(work: Path, **manifest: object) -> None:
    """The export's manifest (`MANIFEST`): what the runtime reads of it. Written last: its
    presence marks a complete export."""
    (work / MANIFEST).write_text(json.dumps(manifest, indent=1))


def _weights_beside(model_file: Path, table: _TokenTable | None = None) -> None:
    """Move the graph's large weights out of `model_file` into WEIGHTS_FILE, each on a page
    boundary, so that ONNX Runtime maps them from the file instead of copying them into memory;
    the token `table` kept apart, if any, takes its stand-in's place first.

    Same weights, same graph, same numbers; what changes is what a process holds. e5's token
    table (250,037 rows, 96 MB in 8 bits) is read a few rows per text: mapped, only the pages
    of the rows read are resident; read in, all of it was, and twice while the session was made
    (the file's bytes, then the weights made from them): `articlebot ask` 413 -> 235 MB.
    """
    import onnx
    from onnx.external_data_helper import set_external_data

    model = onnx.load(str(model_file))
    if table is not None:
        table.replace(model.graph.initializer)
    with open(model_file.with_name(WEIGHTS_FILE), "wb") as out:
        for tensor in model.graph.initializer:
            if len(tensor.raw_data) < _WEIGHT_ALIGNMENT:
                continue  # small ones stay in the graph: a page each would cost more
            out.write(b"\0" * (-out.tell() % _WEIGHT_ALIGNMENT))
            offset = out.tell()
            out.write(tensor.raw_data)
            set_external_data(tensor, WEIGHTS_FILE, offset=offset, length=len(tensor.raw_data))
            tensor.ClearField("raw_data")
            tensor.data_location = onnx.TensorProto.EXTERNAL
    onnx.save_model(model, str(model_file))


def _quantization_config(target: Quantization, float_nodes: Sequence[str] = ()) -> Any:
    """The target's dynamic int8 recipe, with weights of 7 bits on x86-64.

    Activations are unsigned 8-bit, weights signed. AVX2 (and AVX-512 without VNNI) multiply
    them with vpmaddubsw, which adds two products into 16 bits and saturates: 255 x 127 x 2
    overflows, so on those CPUs a full-range export computes other numbers than VNNI's exact
    vpdpbusd, and near ties between passages flip. With weights in [-64, 64] no pair reaches
    the limit (255 x 64 x 2 = 32,640), every kernel computes the same integers, and an export's
    answers no longer depend on the CPU that runs it.
    """
    from optimum.onnxruntime.configuration import AutoQuantizationConfig

    config = getattr(AutoQuantizationConfig, target)(is_static=False)
    config = dataclasses.replace(config, nodes_to_exclude=list(float_nodes))
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
