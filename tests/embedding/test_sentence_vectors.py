"""Sentence vectors read in their passage's one pass at add time (embedding/runtimes.py): each
sentence's row is read from the sentence's own tokens, in every script, the passage's vector
is what it was without them, and a sentence past the model's last token gets none."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from exports import MINILM_EMBEDDINGS

from index.embedding.base import SENTENCE_TOKENS
from index.embedding.embedder import Embedder
from index.embedding.runtimes import _sentence_tokens
from index.text.profile import profile

# Passages of sentences about unlike things: each row is nearer its own sentence than others.
PASSAGES = [
    (
        "en",
        "The bridge opened in 1932 after six years of work. Bees make honey from the nectar "
        "of flowers. The orchestra played Mahler's ninth symphony on Sunday.",
    ),
    ("zh", "这座桥于1932年建成通车。蜜蜂用花蜜酿造蜂蜜。乐团星期日演奏了马勒的第九交响曲。"),
    (
        "fa",
        "این پل در سال ۱۹۳۲ افتتاح شد. زنبورها از شهد گل‌ها عسل می‌سازند. "
        "ارکستر روز یکشنبه سمفونی نهم ماهلر را اجرا کرد.",
    ),
    (
        "th",
        "สะพานนี้เปิดใช้ในปี 1932 หลังจากการก่อสร้างหกปี ผึ้งทำน้ำผึ้งจากน้ำหวานของดอกไม้ "
        "วงออร์เคสตราเล่นซิมโฟนีหมายเลขเก้าของมาห์เลอร์ในวันอาทิตย์",
    ),
]


def test_each_sentence_is_read_from_its_own_tokens(embedder: Embedder) -> None:
    texts = [text for _, text in PASSAGES]
    sentences = [profile(language).sentences(text) for language, text in PASSAGES]
    assert all(len(parts) >= 2 for parts in sentences)
    pending = embedder.start_documents(texts, sentences)
    vectors = pending.result()
    rows = pending.sentences()
    # Asking for the sentences changes no passage vector.
    np.testing.assert_array_equal(vectors, embedder.encode_documents(texts))
    for (language, _), parts, stored in zip(PASSAGES, sentences, rows, strict=True):
        if stored is None:
            pytest.fail(f"{embedder.name} ({embedder.backend}) made no sentence vectors")
        assert stored.shape == (len(parts), embedder.dim) and stored.dtype == np.float16
        alone = embedder.encode_documents(list(parts))
        closeness = stored.astype(np.float32) @ alone.T
        # Read in its passage, a sentence's vector knows the sentences around it, so it is not
        # always nearer its own text than every other; on the whole it is, by a clear margin.
        own = float(np.diag(closeness).mean())
        others = float(closeness[~np.eye(len(parts), dtype=bool)].mean())
        assert own > others + 0.02, (language, closeness)
    # A passage of one sentence: its row is the sentence as embedded alone, less the prompt.
    one = "Bees make honey from the nectar of flowers."
    pending = embedder.start_documents([one], [[one]])
    (vector,) = pending.result()
    (rows,) = pending.sentences()
    assert rows is not None and float(rows[0].astype(np.float32) @ vector) > 0.97


@pytest.mark.parametrize("kind", [k for k in MINILM_EMBEDDINGS if k != "torch"])
def test_all_minilm_reads_an_english_passages_sentences_too(
    kind: str, load_embedding: Callable[[str], Embedder]
) -> None:
    """all-MiniLM-L6-v2's int8 exports, whichever CPU each is for, read their tokens' places
    through `tokenizers`, not SentencePiece: rows for the collections of earlier releases."""
    minilm_embedder = load_embedding(kind)
    language, text = PASSAGES[0]
    parts = profile(language).sentences(text)
    pending = minilm_embedder.start_documents([text], [parts])
    pending.result()
    (rows,) = pending.sentences()
    assert rows is not None and rows.shape == (len(parts), minilm_embedder.dim)
    closeness = rows.astype(np.float32) @ minilm_embedder.encode_documents(list(parts)).T
    assert list(closeness.argmax(axis=1)) == list(range(len(parts)))


def test_a_sentence_past_the_models_last_token_gets_no_vector(embedder: Embedder) -> None:
    sentence = "A short sentence about the harbour. "
    text = (sentence * (embedder.max_tokens // 4)).strip()
    parts = profile("en").sentences(text)
    pending = embedder.start_documents([text], [parts])
    pending.result()
    (rows,) = pending.sentences()
    assert rows is not None and len(rows) == len(parts)
    read = ~np.isnan(rows[:, 0])
    assert read[0] and not read[-1]
    assert list(read) == sorted(read, reverse=True)  # read up to a point, none after


def test_tokens_go_to_the_sentence_their_last_character_is_in() -> None:
    text = "One two. Three four! Five."
    parts = ["One two.", "Three four!", "Five."]
    # Ends of tokens as a tokenizer gives them: a special token (0), "One", " two", ".",
    # " Three" (its space before it), " four", "!", " Five", "." .
    ends = [0, 3, 7, 8, 14, 19, 20, 25, 26]
    assert _sentence_tokens(text, parts, ends) == [[1, 2, 3], [4, 5, 6], [7, 8]]
    # A sentence not found in the text, and one the model did not read to its end, get none;
    # the tokens of the text between go to no sentence.
    assert _sentence_tokens(text, ["One two.", "Nowhere.", "Five."], ends) == [
        [1, 2, 3],
        None,
        [7, 8],
    ]
    assert _sentence_tokens(text, parts, ends[:7]) == [[1, 2, 3], [4, 5, 6], None]


@pytest.mark.parametrize("runtime", ["session", "torch"])
def test_a_sentence_a_question_embeds_is_read_up_to_a_bounded_length(
    runtime: str, embedder: Embedder, load_embedding: Callable[[str], Embedder]
) -> None:
    """A passage without a sentence's end is one long "sentence": a question that embeds it
    alone reads its first SENTENCE_TOKENS tokens, so that its wait stays bounded, in the int8
    export (the session's model) and in the torch fallback (all-MiniLM-L6-v2's) alike."""
    embedder = embedder if runtime == "session" else load_embedding("torch")
    short = "Bees make honey from the nectar of flowers."
    np.testing.assert_allclose(
        embedder.encode_sentences([short]), embedder.encode_documents([short]), atol=1e-6
    )
    # About 180 tokens: past the bound, within both models' lengths (256 and 512).
    run_on = " ".join(["the harbour master counted the boats at dawn"] * 20)
    ends = [run_on + " and then it rained", run_on + " and the festival began"]
    alone = embedder.encode_sentences(ends)
    whole = embedder.encode_documents(ends)
    assert float(alone[0] @ alone[1]) > 0.9999  # what differs lies past the bound
    assert float(whole[0] @ whole[1]) < 0.9999
    assert SENTENCE_TOKENS < max(embedder.token_counts(ends)) < embedder.max_tokens
