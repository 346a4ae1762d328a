"""Work handed to the embedder one step ahead of storing it, so no core waits on the database:
adding articles (collection.py) and embedding a whole collection again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Iterable
from typing import TypeVar

import numpy as np

from index.embedding.embedder import Embedder, PendingVectors
from index.errors import StorageError
from index.records import Passage
from index.storage.interface import ArticleStore
from index.storage.sentence_rows import made_by
from index.text import profile

__all__ = ["REEMBED_CHUNK", "Progress", "one_ahead", "reembed_all"]

T = TypeVar("T")
S = TypeVar("S")

# (stage, done, total): stage is a verb phrase such as "Embedding" or "Re-embedding".
Progress = Callable[[str, int, int], None]

# Re-embedding stages this many passages a transaction, over at most this many rounds.
REEMBED_CHUNK = 256
REEMBED_ROUNDS = 5


def one_ahead(
    items: Iterable[T], start: Callable[[T], S], drop: Callable[[S], object]
) -> Generator[S, None, None]:
    """`start(item)` for each item, in order, each one handed on only after the next has
    started: the embedder has the next batches queued while the caller stores this one.
    What was started but not handed on when the caller stops early (Ctrl-C) is dropped."""
    ahead: list[S] = []
    try:
        for item in items:
            ahead.append(start(item))
            if len(ahead) == 2:
                yield ahead.pop(0)
        while ahead:
            yield ahead.pop(0)
    finally:
        for left in ahead:
            drop(left)


def reembed_all(
    store: ArticleStore, embedder: Embedder, collection: str, progress: Progress | None
) -> None:
    """Embed every passage again, staged beside the old vectors and swapped in at the end.

    Until the swap, questions use the old vectors; a re-embedding that is killed resumes
    from what it staged when run again with the same model.
    """
    model, dim = embedder.name, embedder.dim
    total = store.count(collection)[1]
    # Articles added meanwhile (with the old model) are embedded in a further round.
    for _ in range(REEMBED_ROUNDS):
        todo = store.unstaged_passages(collection, model, dim)
        done = max(0, total - len(todo))
        chunks = [todo[i : i + REEMBED_CHUNK] for i in range(0, len(todo), REEMBED_CHUNK)]
        # Read once a round: the passages of an article added meanwhile come in the next.
        languages = {a.id: a.language for a in store.list_articles(collection)}

        def start(
            chunk: list[Passage], languages: dict[int, str | None] = languages
        ) -> tuple[list[Passage], PendingVectors, list[tuple[str, ...]]]:
            texts = [p.text for p in chunk]
            sentences = [profile(languages.get(p.article_id)).sentences(p.text) for p in chunk]
            return chunk, embedder.start_documents(texts, sentences), sentences

        # The next chunk is queued before this one is stored: no core waits on SQLite.
        started = one_ahead(chunks, start, lambda item: item[1].cancel())
        with contextlib.closing(started):  # on an error, the queued chunk is dropped now
            for chunk, pending, sentences in started:
                vectors = pending.result()
                ids = np.array([p.id for p in chunk])
                rows = made_by(model, pending.sentences(), sentences)
                store.stage_embeddings(collection, model, ids, vectors, rows)
                done += len(chunk)
                if progress:
                    progress("Re-embedding", min(done, total), total)
        if store.swap_staged(collection, model, dim):
            return
        total = store.count(collection)[1]
    raise StorageError(
        "Articles kept arriving faster than they could be re-embedded; "
        "run `articlebot rebuild --reembed` again when adding has stopped."
    )
