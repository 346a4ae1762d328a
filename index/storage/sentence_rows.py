"""Each passage's sentence vectors (tables.py's `sentence_vectors`), written for both stores.

A passage's sentences, as its article's language splits them, each read by the model in the
passage's one pass at add time (embedding/runtimes.py), which a quote's sentences are put in
order by. One row a passage: the model that read it, a digest of the sentences it split the
passage into (`split_of`), and their vectors as float16 (768 bytes a sentence with e5), NaN for
a sentence the model did not read (past its last token). A row is read only by the model that
wrote it and for the same split: a re-embedding writes the new model's over them as it goes,
and a passage its language now splits otherwise (another release's rule, a language identified
since) is read as having none.

Both stores run the same statements; only their placeholders differ (`?` and `%s`).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["SentenceRows", "Stored", "made_by", "read", "split_of", "write"]

# Read this many passages a statement (SQLite's oldest limit on bound values is 999).
_READ_CHUNK = 500


@dataclass(frozen=True)
class Stored:
    """One passage's sentence vectors (a row per sentence, NaN where none was made) and the
    digest of the split they follow."""

    split: int
    vectors: np.ndarray


@dataclass(frozen=True)
class SentenceRows:
    """The sentence vectors `model` made for some passages, one (or None) per passage."""

    model: str
    rows: Sequence[Stored | None]

    @classmethod
    def of(cls, model: str, rows: Sequence[Stored | None]) -> SentenceRows | None:
        """The rows `model` made, or None where it made none for any passage."""
        return cls(model, rows) if any(r is not None for r in rows) else None


def split_of(sentences: Sequence[str]) -> int:
    """A digest of a passage's sentences, in order: which split its stored rows follow."""
    return zlib.crc32("\x1f".join(sentences).encode("utf-8"))


def made_by(
    model: str, rows: Sequence[np.ndarray | None], sentences: Sequence[Sequence[str]]
) -> SentenceRows | None:
    """The sentence vectors an embedding made of passages split into `sentences`, or None where
    its runtime made none."""
    return SentenceRows.of(
        model,
        [
            Stored(split_of(parts), r) if r is not None else None
            for r, parts in zip(rows, sentences, strict=True)
        ],
    )


class _Connection(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


def write(db: _Connection, mark: str, ids: Sequence[int], sentences: SentenceRows) -> None:
    """Store each passage's sentence vectors, over any a passage had."""
    sql = (
        # INSERT ... SELECT: a passage removed meanwhile (during a re-embedding) is skipped.
        "INSERT INTO sentence_vectors (passage_id, model, split, vectors) "
        f"SELECT id, {mark}, {mark}, {mark} "
        f"FROM passages WHERE id = {mark} ON CONFLICT (passage_id) "
        "DO UPDATE SET model = excluded.model, split = excluded.split, vectors = excluded.vectors"
    )
    for passage_id, stored in zip(ids, sentences.rows, strict=True):
        if stored is not None and len(stored.vectors):
            data = np.ascontiguousarray(stored.vectors, dtype=np.float16).tobytes()
            db.execute(sql, (sentences.model, stored.split, data, int(passage_id)))


def read(db: _Connection, mark: str, ids: Sequence[int], model: str, dim: int) -> dict[int, Stored]:
    """The sentence vectors `model` made for these passages, where it made them."""
    out = {}
    for start in range(0, len(ids), _READ_CHUNK):
        chunk = [int(i) for i in ids[start : start + _READ_CHUNK]]
        found = db.execute(
            f"SELECT passage_id, split, vectors FROM sentence_vectors WHERE model = {mark} "
            f"AND passage_id IN ({','.join([mark] * len(chunk))})",
            (model, *chunk),
        ).fetchall()
        for row in found:
            passage_id, split, data = (
                (row["passage_id"], row["split"], row["vectors"]) if isinstance(row, dict) else row
            )
            rows = np.frombuffer(bytes(data), dtype=np.float16)
            if dim and rows.size % dim == 0:
                out[int(passage_id)] = Stored(int(split), rows.reshape(-1, dim).astype(np.float32))
    return out
