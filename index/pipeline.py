"""Work handed to the embedder one step ahead of storing it, so no core waits on the database:
adding articles (collection.py) and embedding a whole collection again; and `rebuild`, a
collection's indexes made again from what is stored, its passages embedded again first where
asked.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Generator, Iterable
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from index.embedding.embedder import Embedder, PendingVectors
from index.errors import StorageError
from index.records import Passage, RebuildResult
from index.storage.interface import ArticleStore
from index.storage.sentence_rows import made_by
from index.text import article_language, profile

if TYPE_CHECKING:
    from index.collection import Collection

__all__ = ["REEMBED_CHUNK", "Progress", "one_ahead", "rebuild", "reembed_all"]

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


def _identify_languages(collection: Collection) -> None:
    """Identify the language of each article stored before languages were, so that the
    rebuilt keyword index reads its words in it."""
    store, name = collection.store, collection.name
    unknown = [a.id for a in collection.articles() if a.language is None]
    found = {aid: article_language([p.text for p in store.passages(name, aid)]) for aid in unknown}
    if found:
        store.set_article_languages(name, found)


def rebuild(
    collection: Collection, *, reembed: bool = False, progress: Progress | None = None
) -> RebuildResult:
    """Re-create the index from what is stored; with reembed, embed every passage again first.

    Questions keep using the old index until the new one is swapped in.
    """
    started = time.perf_counter()
    name = collection.name
    # Languages first: the keyword indexes read each article in its language, and a
    # re-embedding splits each passage's sentences in it and stores their vectors so.
    _identify_languages(collection)
    if reembed:
        # To the default model: the one a collection made today would have.
        reembed_all(collection.store, collection.model.embedder, name, progress)
        collection.model.release_unused_models()
    if collection.store.collection_model(name) is None:
        return RebuildResult(name, 0, reembed, "none", time.perf_counter() - started)
    # Summaries read the sentence vectors: all chosen again after a re-embedding, and those
    # an older release's articles lack chosen now.
    collection.summaries.choose_again(collection.articles(), every=reembed)
    if progress:
        progress("Indexing", 0, 1)
    state = collection.backend.rebuild()
    if progress:
        progress("Indexing", 1, 1)
    return RebuildResult(name, state.indexed, reembed, state.kind, time.perf_counter() - started)
