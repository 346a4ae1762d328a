"""The trained reader's int8 ONNX export, without the token table the retrieval's export holds.

    python -m tools.reader_train_device --evaluate DIR --export

The reader's encoder is exported as the retrieval model's is (onnx_export.export_model, e5's
recipe, its float32 nodes among the layers kept). Its token table is frozen, and the exporter
quantizes a table alone over its own range, so the export's 8-bit table, scale and zero point
are the retrieval export's, byte for byte (`export_reader` checks it). So the table is left out
of what is written: the graph keeps it as an initializer whose data lies elsewhere, and
`OnnxReader` hands it in at load time from the retrieval export's weights file, mapped, through
ONNX Runtime's `SessionOptions.add_external_initializers`. What is written, under DIR/onnx:
`model.onnx` and `model.onnx.data` (the layers, 8-bit), `head.npz` (the head, float32: the
mean of the last layer times its weights, plus its bias, is the logit) and `reader-onnx.json`.
Measured: 17.8 MB at 6 layers, 30 MB at 12 (e5's three float32 products among them), against
126 MB with the table; at 2 layers its logits and the float32 reader's correlate at 0.997 (the
largest difference 0.05) on a few dozen training pairs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tools.reader_pack import PAD

__all__ = ["TABLE", "OnnxReader", "export_reader", "retrieval_export"]

TABLE = "embeddings.word_embeddings.weight"
_QUANTIZED = TABLE + "_quantized"
# Where the graph says the table's data lies: nowhere it is read from (it is handed in).
_ELSEWHERE = "retrieval-export-token-table"
_ALIGNMENT = 1 << 16  # as onnx_export.py writes weights: each on a page boundary


def retrieval_export() -> Path:
    """The folder of the retrieval's e5 int8 export in the user's model cache (made if not)."""
    from index.embedding import e5
    from index.embedding.onnx_export import quantization_target
    from index.settings import model_cache

    return e5.exported(model_cache(os.environ), quantization_target() or "avx2")


def _external(tensor: Any) -> dict[str, str]:
    return {e.key: e.value for e in tensor.external_data}


def _table_parts(folder: Path) -> dict[str, Any]:
    """The token table's initializers of an export: the 8-bit rows (where they lie in its
    weights file, their type and shape) and the scale and zero point (their values)."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(folder / "model.onnx"), load_external_data=False).graph
    found = {t.name: t for t in graph.initializer if t.name.startswith(TABLE)}
    rows = found[_QUANTIZED]
    return {
        "rows": rows,
        "where": _external(rows),
        "dtype": onnx.helper.tensor_dtype_to_np_dtype(rows.data_type),
        "shape": tuple(rows.dims),
        "scale": numpy_helper.to_array(found[TABLE + "_scale"]).tolist(),
        "zero_point": numpy_helper.to_array(found[TABLE + "_zero_point"]).tolist(),
    }


def _table_of(folder: Path) -> np.ndarray:
    """The retrieval export's 8-bit token table, mapped from its weights file."""
    parts = _table_parts(folder)
    where = parts["where"]
    return np.memmap(
        folder / where["location"],
        dtype=parts["dtype"],
        mode="r",
        offset=int(where["offset"]),
        shape=parts["shape"],
    )


def _point(tensor: Any, location: str, offset: int, length: int) -> None:
    """Say where an external initializer's data lies."""
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value


def export_reader(model: Any, target: Path, retrieval: Path) -> dict[str, int]:
    """Write the reader (reader_start.load_reader's, on the retrieval's whole token table)
    under `target` without its token table; the files' sizes."""
    import onnx

    from index.embedding.e5 import E5
    from index.embedding.onnx_export import WEIGHTS_FILE, export_model

    layers = int(model.encoder.config.num_hidden_layers)
    # e5's export keeps a few of its layers' products in float32: those of the layers kept.
    float_nodes = [
        n for n in E5.export.float_nodes if int(re.findall(r"layer\.(\d+)/", n)[0]) < layers
    ]
    whole = target / "with-table"
    shutil.rmtree(whole, ignore_errors=True)
    whole.mkdir(parents=True)
    head = model.head
    np.savez(
        target / "head.npz",
        weight=head.weight.detach().numpy()[0],
        bias=head.bias.detach().numpy(),
    )
    export_model(model.encoder, whole, E5.export.x86 or "avx2", float_nodes)
    ours, theirs = _table_parts(whole), _table_parts(retrieval)
    for key in ("dtype", "shape", "scale", "zero_point"):
        if ours[key] != theirs[key]:
            raise ValueError(f"the reader's token table is not the retrieval's ({key} differs)")
    graph = onnx.load(str(whole / "model.onnx"), load_external_data=False)
    with (
        (whole / WEIGHTS_FILE).open("rb") as source,
        (target / WEIGHTS_FILE).open("wb") as out,
    ):
        for tensor in graph.graph.initializer:
            where = _external(tensor)
            if not where:
                continue
            if tensor.name == _QUANTIZED:
                _point(tensor, _ELSEWHERE, 0, int(where["length"]))
                continue
            source.seek(int(where["offset"]))
            data = source.read(int(where["length"]))
            out.write(b"\0" * (-out.tell() % _ALIGNMENT))
            offset = out.tell()
            out.write(data)
            _point(tensor, WEIGHTS_FILE, offset, len(data))
    onnx.save_model(graph, str(target / "model.onnx"))
    shutil.rmtree(whole)
    (target / "reader-onnx.json").write_text(
        json.dumps(
            {
                "layers": layers,
                "token_table": f"{_QUANTIZED}: the retrieval export's ({retrieval.name})",
                "head": "logit = mean of the last layer (over the mask) . weight + bias",
                "inputs": "<s> query: Q </s></s> passage: P </s>, e5's ids, 256 at most",
            },
            indent=1,
        )
        + "\n"
    )
    return {p.name: p.stat().st_size for p in sorted(target.iterdir())}


class OnnxReader:
    """The exported reader, run by ONNX Runtime with the retrieval export's token table."""

    def __init__(self, folder: Path, retrieval: Path, threads: int = 1) -> None:
        import onnxruntime as ort

        table = _table_of(retrieval)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        # Handed in mapped: only the pages of the rows read become resident.
        self._table = ort.OrtValue.ortvalue_from_numpy(np.asarray(table))
        options.add_external_initializers([_QUANTIZED], [self._table])
        self._session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        head = np.load(folder / "head.npz")
        self._weight, self._bias = head["weight"], float(head["bias"][0])

    def ids(self, ids: Sequence[np.ndarray]) -> list[float]:
        """Logits of pairs given as e5 token ids (`reader_pack.pair_ids`)."""
        if not ids:
            return []
        width = max(len(x) for x in ids)
        batch = np.full((len(ids), width), PAD, np.int64)
        mask = np.zeros_like(batch)
        for i, row in enumerate(ids):
            batch[i, : len(row)] = row
            mask[i, : len(row)] = 1
        feed = {"input_ids": batch, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(batch)
        (hidden,) = self._session.run(["last_hidden_state"], feed)
        pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return [float(x) for x in pooled @ self._weight + self._bias]
