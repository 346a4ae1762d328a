"""Stand-ins for the fast test tier, named as such: they are not the product's parts.

`HashingTestEmbedder` is a small deterministic embedder made for tests: each word (lower-cased,
crudely stemmed; in scripts written without spaces, each pair of characters) adds a fixed
pseudo-random direction, so texts that share words lie close together in any language, with no
model loaded. It answers the questions storage, the CLI and the collection
logic care about (what is stored, numbered, listed, removed, isolated, cited); answer quality is
measured with the real packaged model in the slow tier.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import regex

from index.embedding.calibration import Calibration
from index.embedding.embedder import PendingVectors

__all__ = ["HashingTestEmbedder"]

_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")
_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}]")


class HashingTestEmbedder:
    """A deterministic bag-of-words embedder for tests (no model, no threads)."""

    backend = "test"
    # Its cosines taken as they are, its words alike in any language, the hand-tuned rule.
    calibration = Calibration()

    def __init__(self, dim: int = 384, name: str = "all-MiniLM-L6-v2") -> None:
        # A real model's name and size: data folders made with it open like real ones.
        self.dim = dim
        self.name = name
        self.max_tokens = 256

    def _words(self, text: str) -> list[str]:
        words = []
        for word in _WORD.findall(text.casefold()):
            if _UNSPACED.search(word) and len(word) > 1:
                words.extend(a + b for a, b in zip(word, word[1:], strict=False))
            else:
                words.append(word[:6])
        return words

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        for word in self._words(text):
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            v += np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        norm = float(np.linalg.norm(v))
        return v / norm if norm else v

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(self._words(t)) + 2 for t in texts]

    def start_documents(
        self, texts: Sequence[str], sentences: Sequence[Sequence[str]] | None = None
    ) -> PendingVectors:
        vectors = np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))
        # Each sentence's vector as its words make it (a real runtime reads it in its passage).
        rows: list[np.ndarray | None] | None = None
        if sentences is not None:
            rows = [
                np.stack([self._vector(s) for s in parts]).astype(np.float16) if parts else None
                for parts in sentences
            ]
        return PendingVectors.ready(vectors.astype(np.float32), rows)

    def encode_documents(self, texts: Sequence[str], progress: object = None) -> np.ndarray:
        return self.start_documents(texts).result()

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode_documents(texts)

    def encode_query(self, text: str) -> np.ndarray:
        return self._vector(text)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dim))
