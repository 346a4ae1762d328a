"""The two runtimes behind `Embedder`: torch in float32, and an int8 export on ONNX Runtime."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from index.embedding.base import SENTENCE_TOKENS, Batch, Embedded, Embedder
from index.embedding.calibration import Calibration
from index.embedding.onnx_export import MANIFEST, SENTENCEPIECE_FILE, TOKENIZERS_FILE

__all__ = ["OnnxEmbedder", "TorchEmbedder"]


class TorchEmbedder(Embedder):
    """sentence-transformers in float32 on the CPU; torch spreads each batch over the cores.

    Batches of 2,048 tokens (8 full-length passages): adding 8 SQuAD articles one by one took
    14.3 s with them and 19.8 s with 8,192-token batches (each new batch shape costs torch).
    """

    batch_tokens = 2_048

    def __init__(self, model: Any, name: str, calibration: Calibration | None = None) -> None:
        self._model = model
        self.name = name
        self.calibration = calibration or Calibration()
        self.backend = "torch"
        self.dim = int(model.get_embedding_dimension() or 0)
        self.max_tokens = int(model.max_seq_length)
        self._tokenizer = model.tokenizer

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        prompt = (self._model.prompts or {}).get("document", "")
        ids = self._tokenizer(
            [prompt + t for t in texts], add_special_tokens=True, truncation=False
        )
        return [len(row) for row in ids["input_ids"]]

    def _tokenize(
        self,
        texts: Sequence[str],
        *,
        query: bool,
        sentences: Sequence[Sequence[str]] | None = None,
    ) -> list[Any]:
        # Only lengths are needed here: sentence-transformers tokenizes again as it encodes.
        # (No sentence vectors from this runtime: a quote embeds its sentences when asked.)
        if not texts:
            return []
        ids = self._tokenizer(list(texts), truncation=True, max_length=self.max_tokens)
        return [_Text(t, query, n) for t, n in zip(texts, ids["input_ids"], strict=True)]

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray:
        # sentence-transformers reads a text up to the model's length: each is cut at the end of
        # its last token within SENTENCE_TOKENS (its prompt and special tokens counted, as the
        # int8 runtime counts them), so that a question's wait is bounded here too.
        if not texts:
            return self.encode_documents(texts)
        prompt = (self._model.prompts or {}).get("document", "")
        read = self._tokenizer(
            [prompt + t for t in texts],
            truncation=True,
            max_length=SENTENCE_TOKENS,
            return_offsets_mapping=True,
        )
        cut = [
            text[: max(0, max(end for _, end in offsets) - len(prompt))]
            for text, offsets in zip(texts, read["offset_mapping"], strict=True)
        ]
        return self.encode_documents(cut)

    def _embed(self, tokens: list[Any]) -> Embedded:
        encode = self._model.encode_query if tokens[0].query else self._model.encode_document
        vectors = encode(
            [t.text for t in tokens],
            batch_size=len(tokens),
            normalize_embeddings=True,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32), [None] * len(tokens)


class _Text:
    """A text with its token ids, for batching by length, and where asked, the positions of
    each of its sentences' tokens (None for a sentence past the model's last token)."""

    def __init__(
        self,
        text: str,
        query: bool,
        ids: list[int],
        sentences: list[list[int] | None] | None = None,
    ) -> None:
        self.text, self.query, self.ids = text, query, ids
        self.sentences = sentences

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

    def __init__(self, folder: Path, name: str, calibration: Calibration | None = None) -> None:
        import onnxruntime as ort

        manifest = json.loads((folder / MANIFEST).read_text())
        self.folder = folder
        self.name = name
        self.calibration = calibration or Calibration()
        self.backend = "onnx"
        self.dim = int(manifest["dim"])
        self.max_tokens = int(manifest["max_seq_length"])
        self._pooling = str(manifest["pooling"])
        self._prompts: dict[str, str] = manifest.get("prompts", {})
        # One tokenizer, untruncated, for counting and for embedding (cut by `_clipped`).
        self._tokenizer = _Tokenizer(folder / manifest.get("tokenizer", TOKENIZERS_FILE))
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
        self._question_pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        # A passage's prompt ("passage: " for e5) takes room in the model's positions too.
        prompt = self._prompts.get("document", "")
        return [len(ids) for ids in self._tokenizer([prompt + t for t in texts])]

    def _tokenize(
        self,
        texts: Sequence[str],
        *,
        query: bool,
        sentences: Sequence[Sequence[str]] | None = None,
    ) -> list[Any]:
        prompt = self._prompts.get("query" if query else "document", "")
        if sentences is None:
            encodings = self._tokenizer([prompt + t for t in texts])
            return [
                _Text(t, query, _clipped(ids, self.max_tokens))
                for t, ids in zip(texts, encodings, strict=True)
            ]
        out = []
        ended = self._tokenizer.with_ends([prompt + t for t in texts])
        for text, parts, (ids, ends) in zip(texts, sentences, ended, strict=True):
            clipped = _clipped(ids, self.max_tokens)
            # The clipped text's last token is its closing special one: ends[: kept] are the
            # ones the model reads of the text.
            kept = len(clipped) - 1 if len(clipped) < len(ids) else len(ids)
            places = _sentence_tokens(text, parts, [e - len(prompt) for e in ends[:kept]])
            out.append(_Text(text, query, clipped, places))
        return out

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray:
        tokens = [
            _Text(t.text, False, _clipped(t.ids, SENTENCE_TOKENS))
            for t in self._tokenize(texts, query=False)
        ]
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        if not tokens:
            return out
        # One share per core, so the question's wait is halved on two (5 sentences: 107 -> 63
        # ms here): the first on this thread, the rest on threads of their own, so that they
        # never queue behind an add's batches in the embedding pool.
        shares = [list(range(len(tokens)))[i :: self._workers] for i in range(self._workers)]
        shares = [share for share in shares if share]
        pool = self._question_threads() if len(shares) > 1 else None
        rest = (
            [pool.submit(self._embed, [tokens[i] for i in s]) for s in shares[1:]] if pool else []
        )
        out[shares[0]] = self._embed([tokens[i] for i in shares[0]])[0]
        for share, work in zip(shares[1:], rest, strict=True):
            out[share] = work.result()[0]
        return out

    def _question_threads(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._question_pool is None:
                self._question_pool = ThreadPoolExecutor(
                    self._workers - 1, thread_name_prefix="embed-question"
                )
            return self._question_pool

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

    def _embed(self, tokens: list[Any]) -> Embedded:
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
        return pooled.astype(np.float32, copy=False), [
            _sentence_vectors(states[row], e.sentences) if e.sentences is not None else None
            for row, e in enumerate(tokens)
        ]


def _sentence_vectors(states: np.ndarray, places: list[list[int] | None]) -> np.ndarray:
    """Each sentence's vector read in its passage ("late chunking"): the mean of its tokens'
    states from the passage's one pass, which knows the sentences around it (a sentence that
    says "he" is read as about the one the passage names). NaN for a sentence not read."""
    out = np.full((len(places), states.shape[-1]), np.nan, dtype=np.float32)
    for i, rows in enumerate(places):
        if rows:
            mean = states[rows].mean(axis=0)
            out[i] = mean / max(float(np.linalg.norm(mean)), 1e-12)
    return out.astype(np.float16)


def _sentence_tokens(
    text: str, sentences: Sequence[str], ends: list[int]
) -> list[list[int] | None]:
    """Which tokens each sentence of `text` holds: those whose last character lies in the
    sentence or in the spaces after it. `ends`: each token's end in `text`, as character offsets
    (below 1 for specials and the prompt). A sentence not found in the text, or whose last token
    the model did not read, gets None."""
    spans: list[tuple[int, int, int]] = []  # start, end with the spaces after, sentence number
    at = 0
    for number, sentence in enumerate(sentences):
        found = text.find(sentence, at) if sentence else -1
        if found < 0:
            continue
        at = end = found + len(sentence)
        while end < len(text) and text[end].isspace():
            end += 1
        spans.append((found, end, number))
    places: list[list[int] | None] = [[] for _ in sentences]
    k = 0
    for token, end in enumerate(ends):
        if end < 1:
            continue  # a special token, or the prompt's
        last = end - 1
        while k + 1 < len(spans) and spans[k + 1][0] <= last:
            k += 1
        if spans and spans[k][0] <= last < spans[k][1]:
            rows = places[spans[k][2]]
            assert rows is not None
            rows.append(token)
    read_to = max(ends, default=0)
    found_at = {number: (start, stop) for start, stop, number in spans}
    for number, sentence in enumerate(sentences):
        where = found_at.get(number)
        if where is None or not places[number] or where[0] + len(sentence) > read_to:
            places[number] = None
    return places


Tokenize = Callable[[list[str]], list[list[int]]]  # texts -> their ids, specials included


class _Tokenizer:
    """The export's tokenizer: a SentencePiece model (e5's, 250,002 pieces: about 60 MB and
    0.2 s for 11,000 texts, where `tokenizers` took 270 MB and 2 s), or a `tokenizers` file.
    Called with texts: their ids, specials included; `with_ends`: the ids and, for each, the
    character offset in its text where it ends (0 for a special token)."""

    def __init__(self, path: Path) -> None:
        self._pieces: Any = None
        self._tokenizer: Any = None
        if path.name == SENTENCEPIECE_FILE:
            import sentencepiece

            self._pieces = sentencepiece.SentencePieceProcessor(model_file=str(path))
            self._first, self._last = self._pieces.bos_id(), self._pieces.eos_id()
        else:
            from tokenizers import Tokenizer

            self._tokenizer = Tokenizer.from_file(str(path))
            self._tokenizer.no_padding()  # padded here, to the longest of each batch
            self._tokenizer.no_truncation()

    def __call__(self, texts: list[str]) -> list[list[int]]:
        if self._pieces is not None:
            # One thread: the embedding threads have the cores.
            return [
                [self._first, *ids, self._last] for ids in self._pieces.encode(texts, num_threads=1)
            ]
        return [e.ids for e in self._tokenizer.encode_batch(texts)]

    def with_ends(self, texts: list[str]) -> list[tuple[list[int], list[int]]]:
        if self._tokenizer is not None:
            return [
                (e.ids, [end for _, end in e.offsets]) for e in self._tokenizer.encode_batch(texts)
            ]
        out = []
        for text, proto in zip(
            texts, self._pieces.encode(texts, out_type="proto", num_threads=1), strict=True
        ):
            # SentencePiece gives byte offsets into the UTF-8 text: each byte's character.
            chars = np.repeat(np.arange(len(text)), [len(c.encode("utf-8")) for c in text]).tolist()
            chars.append(len(text))
            ids = [self._first, *(p.id for p in proto.pieces), self._last]
            ends = [0, *(chars[p.end - 1] + 1 if p.end else 0 for p in proto.pieces), 0]
            out.append((ids, ends))
        return out


def _clipped(ids: list[int], limit: int) -> list[int]:
    """The first `limit` ids of a text's, its closing special token ([SEP], </s>) kept last: what
    the tokenizer's own truncation gives, which cuts the text before adding the specials."""
    return ids if len(ids) <= limit else [*ids[: limit - 1], ids[-1]]


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
