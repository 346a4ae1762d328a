"""`articlebot migrate --to URL`: a data folder's collections copied into PostgreSQL.

The stored vectors travel with their passages, so nothing is embedded again; articles keep the
numbers their servers know them by, and who added them when. What the servers' admins chose in
/settings, their conversations and their votes on answers go along. Running it again copies only
what is not there yet (articles are matched by their text), so an interrupted copy resumes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

import index.storage.collection_settings as collection_settings
import index.storage.conversations as conversations
from index.errors import IndexMismatch
from index.ingest.near_duplicates import fingerprint
from index.storage.postgres import PgDatabase, PgStore
from index.storage.sentence_rows import SentenceRows
from index.storage.sql import SqliteDatabase, copy_rows
from index.storage.sqlite_store import Store

__all__ = ["MigrateResult", "migrate"]


@dataclass(frozen=True)
class MigrateResult:
    collections: int
    articles: int  # copied now
    already_present: int
    passages: int  # copied now
    feeds: int
    server_rows: int  # settings, conversation turns and votes read from the data folder

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def migrate(
    source: Store,
    target: PgStore,
    collections: list[str] | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> MigrateResult:
    names = collections if collections is not None else source.collection_names()
    copied = present = passages = feeds = 0
    for name in names:
        model = source.collection_model(name)
        if model is not None:
            there = target.collection_model(name)
            if there and there != model:
                raise IndexMismatch(
                    f"The collection {name!r} in the database was embedded with {there[0]}, "
                    f"not {model[0]}; migrate it under another name or remove it there first."
                )
            target.set_collection_model(name, *model)
        articles = sorted(source.list_articles(name), key=lambda a: a.id)
        for done, article in enumerate(articles, start=1):
            stored = source.article_passages(name, article.id)
            vectors = _vectors(source, name, [p.id for p in stored], model[1] if model else 0)
            signed = fingerprint([p.text for p in stored])
            sentences = None
            if model is not None:  # quotes are chosen by them: they travel with the passages
                found = source.sentence_vectors([p.id for p in stored], *model)
                sentences = SentenceRows.of(model[0], [found.get(p.id) for p in stored])
            # The summary travels too (one an older release's article lacks is chosen there
            # when first asked for, as here).
            summary = source.summaries(name, [article.id]).get(article.id)
            _, added = target.copy_article(article, stored, vectors, signed, sentences, summary)
            copied += added
            present += not added
            passages += len(stored) if added else 0
            if progress:
                progress(f"Copying {name}", done, len(articles))
        for feed in source.list_feeds(name):
            followed, _ = target.add_feed(name, feed.url, feed.title, feed.added_by)
            target.mark_seen(followed.id, sorted(source.seen_entries(feed.id)))
            feeds += 1
    rows = _server_state(source, target) if collections is None else 0
    return MigrateResult(len(names), copied, present, passages, feeds, rows)


# The bot's own tables in the data folder (their files, and the columns of each table).
_SERVER_TABLES = [
    (collection_settings.FILE_NAME, "settings", ["collection", "name", "value"]),
    (
        conversations.FILE_NAME,
        "turns",
        ["collection", "answer_id", "conversation", "question", "answer", "abstained"]
        + ["citations", "asked_at"],
    ),
    (
        conversations.FILE_NAME,
        "votes",
        ["collection", "answer_id", "member_id", "helpful", "question", "answer", "abstained"]
        + ["citations", "voted_at"],
    ),
]


def _server_state(source: Store, target: PgStore) -> int:
    """Copy what the servers chose in /settings, their conversations and votes, if any."""
    copied = 0
    for file_name, table, columns in _SERVER_TABLES:
        path = source.path.parent / file_name
        if path.exists():
            db = SqliteDatabase(path, "")
            try:
                copied += copy_rows(db, PgDatabase(target), table, columns)
            finally:
                db.close()
    return copied


def _vectors(source: Store, collection: str, ids: list[int], dim: int) -> np.ndarray:
    """The passages' stored vectors, in the order of `ids`."""
    found: dict[int, np.ndarray] = {}
    for batch_ids, batch in source.iter_embeddings(collection, dim, ids=ids):
        found.update(zip(batch_ids.tolist(), batch, strict=True))
    return np.vstack([found[i] for i in ids]) if ids else np.zeros((0, dim), np.float32)
