"""Speed and scale: the int8 backend answers like fp32, its export is made once and reused, the
index kind follows the collection's size, and `articlebot bench` reports its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from exports import MINILM_EMBEDDINGS

import index.search.vectors as vectors_module
from index import Library
from index.cli import main
from index.embedding.embedder import MINILM_MODEL_NAME, Embedder, load_embedder
from index.ops.index_bench import synthetic_queries, synthetic_vectors
from index.search.vectors import FLAT_LIMIT, IndexParams, VectorIndex, exact_search

pytestmark = pytest.mark.slow  # the real model's exports and large indexes

ROOT = Path(__file__).resolve().parents[2]

# The sample article's questions, each with the paragraph (as a reader counts) that answers it.
SAMPLE_QUESTIONS = {
    "Which gang was targeted?": 14,
    "What was the $60 million judgment for?": 10,
    "Who announced the lawsuits?": 11,
    "Where might ICE reopen an office?": 4,
    "What did Hochul call the lawsuits?": 13,
    "Who is the judge?": 10,
    "What did Adams call broken?": 8,
}


@pytest.fixture(scope="session")
def onnx_embedder(minilm_embedder: Embedder) -> Embedder:
    embedder = minilm_embedder
    if embedder.backend != "onnx":
        pytest.skip("the int8 ONNX backend is unavailable on this machine")
    return embedder


@pytest.fixture(scope="module")
def torch_library(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    library = Library(
        tmp_path_factory.mktemp("fp32"), embedder=load_embedder(MINILM_MODEL_NAME, backend="torch")
    )
    yield library
    library.close()


@pytest.mark.parametrize("kind", [k for k in MINILM_EMBEDDINGS if k != "torch"])
def test_int8_and_fp32_cite_the_same_top_passage(
    kind: str,
    load_embedding: Callable[[str], Embedder],
    make_library: Callable[..., Library],
    torch_library: Library,
    sample_text: str,
) -> None:
    """Each int8 export, whichever CPU it is for: with 7-bit weights every x86-64 kernel
    computes the same numbers (tools/bench/int8_across_cpus.py), so this machine stands
    for all."""
    onnx_embedder = load_embedding(kind)
    library = make_library(embedder=onnx_embedder)
    int8, fp32 = library.collection(), torch_library.collection()
    int8.add_text(sample_text)
    fp32.add_text(sample_text)
    same = right_int8 = right_fp32 = 0
    for question, gold in SAMPLE_QUESTIONS.items():
        a = [c.paragraph for c in int8.ask(question, top_k=3).citations]
        b = [c.paragraph for c in fp32.ask(question, top_k=3).citations]
        # Where the two differ, it is a near tie: each one's first is in the other's top three.
        assert a[0] in b and b[0] in a, (question, a, b)
        same += a[0] == b[0]
        right_int8 += a[0] == gold
        right_fp32 += b[0] == gold
    assert same >= len(SAMPLE_QUESTIONS) - 1
    assert right_int8 >= right_fp32  # no loss of retrieval quality
    # Both backends store the same model name: their vectors are interchangeable.
    assert int8.stats().model == fp32.stats().model
    ((_, x),) = library.store.iter_embeddings("default", onnx_embedder.dim)
    ((_, y),) = torch_library.store.iter_embeddings("default", onnx_embedder.dim)
    assert float(np.mean(np.sum(x * y, axis=1))) > 0.98


def test_the_export_is_made_once_and_loads_without_torch(
    onnx_embedder: Embedder, tmp_path: Path
) -> None:
    folder: Path = onnx_embedder.folder  # type: ignore[attr-defined]
    cache = folder.parent
    # What a killed exporter leaves behind: a hidden, half-written folder. It is never used,
    # and the next process to load the model clears it away.
    (cache / f".{folder.name}-dead").mkdir(exist_ok=True)
    (cache / f".{folder.name}-dead" / "model.onnx").write_bytes(b"half")
    exports = sorted(p.parent.name for p in cache.glob("*/embedder.json"))
    assert folder.name in exports
    script = (
        "import sys; from pathlib import Path; from index.embedding.embedder import load_embedder; "
        f"e = load_embedder('all-MiniLM-L6-v2', backend='onnx', cache_dir=Path({str(cache)!r})); "
        "print(e.backend, e.folder.name, 'torch' in sys.modules, e.encode_query('x').tolist())"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split(" ", 3)
    assert out[:3] == ["onnx", folder.name, "False"]
    assert np.allclose(json.loads(out[3]), onnx_embedder.encode_query("x"), atol=1e-5)
    assert sorted(p.parent.name for p in cache.glob("*/embedder.json")) == exports  # none new
    assert not (cache / f".{folder.name}-dead").exists()


def test_batched_documents_come_back_in_their_order(embedder: Embedder) -> None:
    texts = [
        "A long paragraph about the harbour, " * 20,
        "Short one.",
        "The council approved the budget for the new library on Tuesday.",
        "Rain is expected tomorrow.",
    ]
    together = embedder.encode_documents(texts)
    alone = np.vstack([embedder.encode_documents([t]) for t in texts])
    similarity = together @ alone.T
    assert list(similarity.argmax(axis=1)) == [0, 1, 2, 3]
    # int8 activations are quantized per batch, so batch-mates move a vector a little.
    assert np.all(np.diag(similarity) > 0.95)
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-4)


def test_a_stopped_embedding_drops_its_queued_batches(onnx_embedder: Embedder) -> None:
    """What lets Ctrl-C stop a long add at once, rather than after every queued batch has run."""
    texts = [f"Paragraph {i} on the harbour ferry timetable and fares. " * 8 for i in range(200)]
    pending = onnx_embedder.start_documents(texts)  # about 40 batches for 2 workers
    assert pending.cancel() >= 30, "only the batches already running go on"
    vectors = onnx_embedder.encode_documents(texts[:3])  # the embedder is free again
    assert vectors.shape == (3, onnx_embedder.dim)


def test_small_collections_search_exactly_large_ones_approximately() -> None:
    vectors = synthetic_vectors(200, 32)
    index = VectorIndex.build(vectors, np.arange(200), model="m", dim=32)
    assert index.kind == "flat"
    assert IndexParams.for_size(FLAT_LIMIT).kind == "flat"
    assert IndexParams.for_size(FLAT_LIMIT + 1).kind == "ivf"
    big = IndexParams.for_size(1_000_000)
    assert (big.nlist, big.trained_for) == (4096, 1_000_000)


def test_an_ivf_index_finds_removes_and_reloads(tmp_path: Path) -> None:
    vectors = synthetic_vectors(6_000, 64, seed=3)
    ids = np.arange(1_000, 7_000)
    index = VectorIndex.build(vectors, ids, model="m", dim=64, kind="ivf")
    assert index.kind == "ivf" and len(index) == 6_000 and index.ids() == set(ids.tolist())
    queries = synthetic_queries(vectors, 200)
    truth = ids[exact_search(vectors, queries, 10)]
    found = sum(
        len(np.intersect1d(index.search(q, 10)[1], t)) for q, t in zip(queries, truth, strict=True)
    )
    assert found / 2_000 >= 0.9

    top = int(index.search(queries[0], 1)[1][0])
    index.remove(np.array([top]))
    assert top not in index.search(queries[0], 10)[1] and len(index) == 5_999
    index.add(vectors[ids == top], np.array([top]))
    assert int(index.search(queries[0], 1)[1][0]) == top

    index.save(tmp_path / "c.faiss")
    sidecar = json.loads((tmp_path / "c.json").read_text())
    assert sidecar["model"] == "m" and sidecar["dim"] == 64 and sidecar["count"] == 6_000
    assert sidecar["kind"] == "ivf" and sidecar["nprobe"] == index.params.nprobe
    again = VectorIndex.load(tmp_path / "c.faiss", model="m", dim=64)
    assert again.params == index.params
    assert np.array_equal(again.search(queries[1], 10)[1], index.search(queries[1], 10)[1])


def test_a_growing_collection_switches_to_ivf_by_itself(
    library: Library, sample_text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    collection = library.collection()
    collection.add_text(sample_text)
    flat = collection.ask("Which gang was targeted?")
    assert collection.stats().index_type == "flat"
    monkeypatch.setattr(vectors_module, "FLAT_LIMIT", 10)  # the sample has 14 paragraphs
    collection.add_text("Harbour hours\n\nThe harbour office opens at nine on weekdays.")
    stats = collection.stats()
    assert (stats.index_type, stats.indexed) == ("ivf", stats.passages)
    ivf = collection.ask("Which gang was targeted?")
    assert ivf.citations[0].paragraph == flat.citations[0].paragraph
    assert collection.rebuild().index_type == "ivf"
    reopened = Library(library.data_dir, embedder=library.embedder)
    try:
        assert reopened.collection().stats().index_type == "ivf"
    finally:
        reopened.close()


def test_bench_prints_one_json_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "--passages", "3000", "--queries", "200", "--data-dir", str(tmp_path)]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert set(result) == {
        "passages", "index", "build_s", "p50_ms", "p99_ms", "recall_at_10", "rss_mb"
    }  # fmt: skip
    assert (result["passages"], result["index"], result["recall_at_10"]) == (3000, "flat", 1.0)
    assert result["rss_mb"] > 0 and result["p99_ms"] >= result["p50_ms"] > 0
    assert main([*args, "--index", "ivf"]) == 0
    assert "ivf index" in capsys.readouterr().out


def test_an_open_collection_sees_what_another_process_adds_and_removes(
    make_library: Callable[..., Library], sample_text: str, tmp_path: Path
) -> None:
    writer, reader = make_library(tmp_path / "shared"), make_library(tmp_path / "shared")
    question = "Which gang was targeted?"
    assert reader.collection().ask(question).citations == []  # warm, and empty
    article = writer.collection().add_text(sample_text).article
    assert reader.collection().ask(question).citations[0].article_id == article.id
    writer.collection().remove(article.id)
    assert reader.collection().ask(question).citations == []
