"""Each article's summary (tables.py's `summaries`), written and read alike by both stores.

One row an article: its summary's sentences as a JSON list of [paragraph, sentence], verbatim
from its passages. Written in the add's own transaction, so that no article is stored without
one; an article stored by an older release has none until it is first asked for (or `rebuild`
runs), when it is chosen from what is stored. Both stores run the same statements; only their
placeholders differ (`?` and `%s`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from index.records import SummarySentence

__all__ = ["read", "write"]

_READ_CHUNK = 500


class _Connection(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...


def write(
    db: _Connection, mark: str, collection: str, summaries: Mapping[int, Sequence[SummarySentence]]
) -> None:
    """Store each article's summary, over any it had (an article removed meanwhile is skipped)."""
    sql = (
        "INSERT INTO summaries (article_id, collection, sentences) "
        f"SELECT id, collection, {mark} FROM articles WHERE id = {mark} AND collection = {mark} "
        "ON CONFLICT (article_id) DO UPDATE SET sentences = excluded.sentences"
    )
    for article_id, sentences in summaries.items():
        data = json.dumps([[s.paragraph, s.text] for s in sentences], ensure_ascii=False)
        db.execute(sql, (data, int(article_id), collection))


def read(
    db: _Connection, mark: str, collection: str, ids: Sequence[int]
) -> dict[int, list[SummarySentence]]:
    """The stored summaries of these articles of `collection`, where they have one."""
    out: dict[int, list[SummarySentence]] = {}
    for start in range(0, len(ids), _READ_CHUNK):
        chunk = [int(i) for i in ids[start : start + _READ_CHUNK]]
        rows = db.execute(
            f"SELECT article_id, sentences FROM summaries WHERE collection = {mark} "
            f"AND article_id IN ({','.join([mark] * len(chunk))})",
            (collection, *chunk),
        ).fetchall()
        for row in rows:
            article_id, data = (
                (row["article_id"], row["sentences"]) if isinstance(row, dict) else row
            )
            out[int(article_id)] = [SummarySentence(int(p), str(t)) for p, t in json.loads(data)]
    return out
