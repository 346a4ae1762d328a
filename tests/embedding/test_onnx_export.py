"""The int8 export keeps a model's token table out of the exporter and the quantizer (the copies
they make of e5's table were most of its export's memory): the export must not change."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from index.embedding import onnx_export
from index.embedding.onnx_export import WEIGHTS_FILE, export_model


def _small_model(vocab: int) -> object:
    """A small XLM-R encoder, e5's kind, of random weights from a fixed seed."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    torch.manual_seed(7)
    config = XLMRobertaConfig(
        vocab_size=vocab,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=66,
        pad_token_id=1,
    )
    model = XLMRobertaModel(config).eval()
    with torch.no_grad():  # a spread of values, as a trained table has, not one near zero
        model.get_input_embeddings().weight.normal_(0.0, 0.3)
    return model


def _embed(folder: Path, ids: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in {i.name for i in session.get_inputs()}:
        feed["token_type_ids"] = np.zeros_like(ids)
    return np.asarray(session.run(None, feed)[0])


@pytest.mark.slow  # imports torch and the exporter, and exports twice (a few seconds)
@pytest.mark.parametrize("target", ["avx512_vnni", "avx2", "arm64"])
def test_the_token_table_kept_apart_gives_the_same_export_byte_for_byte(
    tmp_path: Path, target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    vocab = 3000  # many more rows than the stand-in's, so that rows past it are read too
    # Slices that do not divide the table, so that the range and the rows cross their edges.
    monkeypatch.setattr(onnx_export._TokenTable, "SLICE_ROWS", 997)
    whole, apart = tmp_path / "whole", tmp_path / "apart"
    whole.mkdir()
    apart.mkdir()
    export_model(_small_model(vocab), whole, target, table_apart=False)  # type: ignore[arg-type]
    export_model(_small_model(vocab), apart, target)  # type: ignore[arg-type]
    for name in ("model.onnx", WEIGHTS_FILE):
        assert (apart / name).read_bytes() == (whole / name).read_bytes(), name
    # And what a member's question meets: the same vectors for tokens from every part of the
    # table, the last row included.
    ids = np.array([[0, 5, 2999, 1500, 8, 2], [0, 2998, 7, 123, 2047, 2]], np.int64)
    assert np.array_equal(_embed(apart, ids), _embed(whole, ids))


@pytest.mark.slow
def test_a_graph_without_the_table_it_was_exported_with_is_refused(tmp_path: Path) -> None:
    # Should the exporter ever name the table's weight otherwise, the export stops rather than
    # ship the stand-in's eight rows as the model's vocabulary.
    import onnx

    from index.embedding import onnx_export

    table = onnx_export._TokenTable(
        "no.such.weight", np.zeros((2, 2), np.uint8), *[np.array(0)] * 2
    )
    graph = onnx.helper.make_graph([], "g", [], [])
    with pytest.raises(ValueError, match="no.such.weight_quantized"):
        table.replace(graph.initializer)


@pytest.mark.slow
def test_a_graph_that_still_reads_the_table_unquantized_is_refused() -> None:
    # A table the graph also reads in float32 (tied to an output layer) would be read as the
    # stand-in's eight rows there: the export stops instead.
    import onnx

    from index.embedding import onnx_export

    name = "embeddings.word_embeddings.weight"
    table = onnx_export._TokenTable(name, np.zeros((2, 2), np.uint8), *[np.array(0)] * 2)
    stand_in = onnx.numpy_helper.from_array(np.zeros((8, 2), np.float32), name)
    graph = onnx.helper.make_graph([], "g", [], [], initializer=[stand_in])
    with pytest.raises(ValueError, match="reads embeddings.word_embeddings.weight unquantized"):
        table.replace(graph.initializer)
