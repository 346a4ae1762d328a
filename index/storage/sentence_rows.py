"""Each passage's sentence vectors (tables.py's `sentence_vectors`), written for both stores.

A passage's sentences, as its article's language splits them, each read by the model in the
passage's one pass at add time (embedding/runtimes.py), so that a quote is chosen by meaning
without embedding anything at question time. One row a passage: the model that read it, and its
sentences' vectors as float16 (768 bytes a sentence with e5), NaN for a sentence the model did
not read (past its last token). A row of another model than the collection's is not read: a
re-embedding writes its own over them as it goes, and until its swap questions embed what
they quote.

Both stores run the same statements; only their placeholders differ (`?` and `%s`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

__all__ = ["SentenceRows", "made_by", "read", "write"]


@dataclass(frozen=True)
class SentenceRows:
    """The sentence vectors `model` made for some passages, one array (or None) per passage."""

    model: str
    rows: Sequence[np.ndarray | None]


def made_by(model: str, rows: Sequence[np.ndarray | None]) -> SentenceRows | None:
    """The sentence vectors an embedding made, or None where its runtime made none."""
    return SentenceRows(model, rows) if any(r is not None for r in rows) else None


class _Connection(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


def write(db: _Connection, mark: str, ids: Sequence[int], sentences: SentenceRows) -> None:
    """Store each passage's sentence vectors, over any a passage had."""
    sql = (
        # INSERT ... SELECT: a passage removed meanwhile (during a re-embedding) is skipped.
        f"INSERT INTO sentence_vectors (passage_id, model, vectors) SELECT id, {mark}, {mark} "
        f"FROM passages WHERE id = {mark} ON CONFLICT (passage_id) "
        "DO UPDATE SET model = excluded.model, vectors = excluded.vectors"
    )
    for passage_id, rows in zip(ids, sentences.rows, strict=True):
        if rows is not None and len(rows):
            data = np.ascontiguousarray(rows, dtype=np.float16).tobytes()
            db.execute(sql, (sentences.model, data, int(passage_id)))


def read(
    db: _Connection, mark: str, ids: Sequence[int], model: str, dim: int
) -> dict[int, np.ndarray]:
    """The sentence vectors `model` made for these passages, where it made them."""
    if not ids:
        return {}
    marks = ",".join([mark] * len(ids))
    found = db.execute(
        f"SELECT passage_id, vectors FROM sentence_vectors WHERE model = {mark} "
        f"AND passage_id IN ({marks})",
        (model, *(int(i) for i in ids)),
    ).fetchall()
    out = {}
    for row in found:
        passage_id, data = (row["passage_id"], row["vectors"]) if isinstance(row, dict) else row
        rows = np.frombuffer(bytes(data), dtype=np.float16)
        if dim and rows.size % dim == 0:
            out[int(passage_id)] = rows.reshape(-1, dim).astype(np.float32)
    return out
