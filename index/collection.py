"""Collections: add, ask, list, remove and rebuild over one corpus of articles.

`Library` owns one data folder (one SQLite file, one FAISS file per collection) and loads the
embedding model once, on first need. `Collection` is one corpus; nothing crosses between them.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from collections.abc import Collection as Container
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from .answer import compose
from .chunking import chunk_paragraphs
from .embedder import (
    Backend,
    Embedder,
    PendingVectors,
    load_embedder,
    model_dimension,
    model_name,
)
from .errors import ArticlebotError, ArticleNotFound, BadInput, IndexMismatch, StorageError
from .keyword import KeywordIndex, tokenize
from .locking import file_lock
from .models import AddResult, Answer, Article, Document, RebuildResult, Stats
from .search import RESCORE_DEPTH, Hit, fuse, rescore
from .sources import Limits, read_path, read_text, read_url
from .store import Passage, Store
from .text import content_hash, normalize
from .vectors import VectorIndex

__all__ = ["Collection", "Library", "Progress"]

T = TypeVar("T")
S = TypeVar("S")

# (stage, done, total): stage is a verb phrase such as "Embedding" or "Re-embedding".
Progress = Callable[[str, int, int], None]

# Re-embedding stages this many passages a transaction, over at most this many rounds.
REEMBED_CHUNK = 256
REEMBED_ROUNDS = 5

# How many candidates each side retrieves before fusion; more than top-k so fusion can reorder.
CANDIDATES = 50

log = logging.getLogger(__name__)


class Library:
    """One data folder: the store, the model (loaded once), and the open collections."""

    def __init__(
        self,
        data_dir: Path,
        *,
        model_path: str | None = None,
        backend: Backend = "auto",
        limits: Limits | None = None,
        max_question_chars: int = 1_000,
        embedder: Embedder | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.store = Store(self.data_dir / "articlebot.db")
        self.limits = limits or Limits()
        self.max_question_chars = max_question_chars
        self._model_path = model_path
        self._backend = backend
        self._embedder = embedder
        self._embedder_lock = threading.Lock()
        self._collections: dict[str, Collection] = {}
        self._collections_lock = threading.Lock()

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = load_embedder(
                    self._model_path, self._backend, self.data_dir / "models"
                )
            return self._embedder

    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder else model_name(self._model_path)

    def embedder_dim(self) -> int:
        """The model's vector size, read from its files if the model is not loaded yet."""
        return self._embedder.dim if self._embedder else model_dimension(self._model_path)

    def collection(self, name: str = "default") -> Collection:
        name = name.strip() or "default"
        with self._collections_lock:
            if name not in self._collections:
                self._collections[name] = Collection(self, name)
            return self._collections[name]

    def close(self) -> None:
        self.store.close()


@dataclass
class _Pending:
    """An article read and cut into passages, its vectors on the way."""

    doc: Document
    digest: str
    passages: list[tuple[int, int, str]]
    vectors: PendingVectors


def _one_ahead(
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


def _file_stem(name: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64]
    if safe != name:  # keep distinct names distinct after cleaning
        safe += "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return safe


def _remove_dead_temp_files(index_path: Path) -> None:
    """Delete the temp files of a save that a killed process left; call only under the lock.

    `VectorIndex.save` writes `<name><8 random chars>.tmp` (tempfile.mkstemp) for the index and
    its sidecar; the exact pattern spares other collections' files.
    """
    names = "|".join(re.escape(p.name) for p in (index_path, index_path.with_suffix(".json")))
    dead = re.compile(rf"(?:{names})[a-z0-9_]{{8}}\.tmp")
    with contextlib.suppress(FileNotFoundError), os.scandir(index_path.parent) as entries:
        for entry in entries:
            if dead.fullmatch(entry.name):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


class Collection:
    def __init__(self, library: Library, name: str) -> None:
        self.library = library
        self.name = name
        self.store = library.store
        self.index_path = library.data_dir / "indexes" / f"{_file_stem(name)}.faiss"
        self._lock_path = self.index_path.with_suffix(".lock")
        self._lock = threading.RLock()
        self._vectors: VectorIndex | None = None
        self._keywords: KeywordIndex | None = None
        self._signature: tuple[int, int] | None = None
        self._data_version: int | None = None  # the store's data_version at the last look

    # adding

    def add_path(self, path: str | Path, *, title: str | None = None, **kw: object) -> AddResult:
        return self.add(read_path(path, title=title, limits=self.library.limits), **kw)  # type: ignore[arg-type]

    def add_url(self, url: str, *, title: str | None = None, **kw: object) -> AddResult:
        return self.add(read_url(url, title=title, limits=self.library.limits), **kw)  # type: ignore[arg-type]

    def add_text(
        self, text: str, *, title: str | None = None, source: str = "text", **kw: object
    ) -> AddResult:
        doc = read_text(text, title=title, source=source, limits=self.library.limits)
        return self.add(doc, **kw)  # type: ignore[arg-type]

    def add(
        self, doc: Document, *, added_by: str | None = None, progress: Progress | None = None
    ) -> AddResult:
        """Store and index an article; the same text (or canonical URL) is stored only once."""
        return self._finish(self._begin(doc), added_by, progress)

    def add_many(
        self,
        readers: Iterable[Callable[[], Document]],
        *,
        added_by: str | None = None,
        progress: Progress | None = None,
    ) -> Iterator[AddResult | ArticlebotError]:
        """Add each reader's article, in order: an input that fails gives its error, not a stop.

        While one article's passages are embedded, the next is read, cut and queued behind
        them, so that the embedding never waits for reading and no core idles between articles.
        """

        def begin(read: Callable[[], Document]) -> _Pending | AddResult | ArticlebotError:
            try:
                return self._begin(read())
            except ArticlebotError as exc:
                return exc

        def drop(started: _Pending | AddResult | ArticlebotError) -> None:
            if isinstance(started, _Pending):
                started.vectors.cancel()

        with contextlib.closing(_one_ahead(readers, begin, drop)) as ahead:
            for started in ahead:
                yield self._finish_or_error(started, added_by, progress)

    def _begin(self, doc: Document) -> _Pending | AddResult:
        """Everything before storing: the duplicate check, cutting, and starting the embedding."""
        digest = content_hash(doc.paragraphs)
        existing = self.store.find_existing(self.name, digest, doc.url)
        if existing:
            return AddResult(existing, added=False, skipped=doc.skipped)
        embedder = self.library.embedder
        self._check_model(embedder)
        passages = chunk_paragraphs(doc.paragraphs, embedder.token_counts, embedder.max_tokens)
        vectors = embedder.start_documents([text for _, _, text in passages])
        return _Pending(doc, digest, passages, vectors)

    def _finish(
        self, started: _Pending | AddResult, added_by: str | None, progress: Progress | None
    ) -> AddResult:
        if isinstance(started, AddResult):
            return started

        def report(done: int, total: int) -> None:
            if progress:
                progress("Embedding", done, total)

        vectors = started.vectors.result(report)
        embedder = self.library.embedder
        if self.store.collection_model(self.name) is None:
            self.store.set_collection_model(self.name, embedder.name, embedder.dim)
        article, added = self.store.insert_article(
            self.name, started.doc, started.digest, started.passages, vectors, added_by
        )
        if added:
            self._refresh()
        return AddResult(article, added=added, skipped=started.doc.skipped)

    def _finish_or_error(
        self,
        started: _Pending | AddResult | ArticlebotError,
        added_by: str | None,
        progress: Progress | None,
    ) -> AddResult | ArticlebotError:
        if isinstance(started, ArticlebotError):
            return started
        try:
            return self._finish(started, added_by, progress)
        except ArticlebotError as exc:
            return exc

    def _check_model(self, embedder: Embedder) -> None:
        stored = self.store.collection_model(self.name)
        if stored and stored != (embedder.name, embedder.dim):
            raise IndexMismatch(
                f"The collection {self.name!r} was embedded with {stored[0]}, not "
                f"{embedder.name}; run `articlebot rebuild --reembed` to switch models."
            )

    # reading

    def articles(self) -> list[Article]:
        """Every article, newest first."""
        return self.store.list_articles(self.name)

    def get(self, article_id: int) -> Article:
        article = self.store.get_article(self.name, article_id)
        if article is None:
            raise ArticleNotFound(
                f"There is no article {article_id} in this collection; "
                "see `articlebot list` for the ids."
            )
        return article

    def remove(self, article_id: int) -> Article:
        article = self.get(article_id)
        self.store.delete_article(self.name, article_id)
        self._refresh()
        return article

    def stats(self) -> Stats:
        # Another process may add between syncing and counting; sync again so the report agrees.
        for _ in range(3):
            vectors, _ = self._indexes(keywords=False)
            articles, passages = self.store.count(self.name)
            if (len(vectors) if vectors else 0) == passages:
                break
        model = self.store.collection_model(self.name)
        size = self.index_path.stat().st_size if self.index_path.exists() else 0
        return Stats(
            collection=self.name,
            articles=articles,
            passages=passages,
            indexed=len(vectors) if vectors else 0,
            model=model[0] if model else self.library.embedder_name(),
            index_type=vectors.kind if vectors else "none",
            index_bytes=size,
        )

    # asking

    def ask(
        self, question: str, *, top_k: int = 5, article_ids: Container[int] | None = None
    ) -> Answer:
        question = " ".join(normalize(question).split())
        if not question:
            raise BadInput("The question is empty; ask something about the articles.")
        limit = self.library.max_question_chars
        if len(question) > limit:
            raise BadInput(
                f"The question is {len(question):,} characters long; keep it under {limit:,}."
            )
        top_k = max(1, min(int(top_k), 50))
        vectors, keywords = self._indexes()
        if vectors is None or len(vectors) == 0:
            return compose(question, [], {}, {})
        embedder = self.library.embedder
        self._check_model(embedder)
        query = embedder.encode_query(question)
        if article_ids is not None:
            hits, keywords = self._search_articles(question, query, set(article_ids), top_k)
        else:
            assert keywords is not None
            index = keywords
            hits = fuse(
                vectors.search(query, CANDIDATES),
                index.search(question, CANDIDATES),
                lambda ids: self._cosines(query, ids),
                lambda ids: index.scores(question, ids),
                max(top_k, RESCORE_DEPTH),
            )
        passages = self.store.passages_by_id([h.passage_id for h in hits])
        hits = [h for h in hits if h.passage_id in passages]  # one removed meanwhile is gone
        texts = {pid: p.text for pid, p in passages.items()}
        hits = rescore(question, hits, texts, tokenize, keywords, top_k)
        articles = {aid: self.get(aid) for aid in {passages[h.passage_id].article_id for h in hits}}
        return compose(question, hits, passages, articles, terms=keywords, searched=len(keywords))

    def _cosines(self, query: np.ndarray, ids: list[int]) -> dict[int, float]:
        dim = self.library.embedder.dim
        out: dict[int, float] = {}
        for batch_ids, vectors in self.store.iter_embeddings(self.name, dim, ids=ids):
            out.update(zip(batch_ids.tolist(), (vectors @ query).tolist(), strict=True))
        return out

    def _search_articles(
        self, question: str, query: np.ndarray, article_ids: set[int], top_k: int
    ) -> tuple[list[Hit], KeywordIndex]:
        """Search only some articles (one chosen article, or a follow-up's sources)."""
        passages = [p for aid in article_ids for p in self.store.passages(self.name, aid)]
        index = self._keyword_index(passages)
        if not passages:
            return [], index
        ids = [p.id for p in passages]
        cosine = self._cosines(query, ids)
        order = sorted(ids, key=lambda i: -cosine[i])[:CANDIDATES]
        dense = (np.array([cosine[i] for i in order]), np.array(order, dtype=np.int64))
        hits = fuse(
            dense,
            index.search(question, CANDIDATES),
            lambda missing: self._cosines(query, missing),
            lambda missing: index.scores(question, missing),
            max(top_k, RESCORE_DEPTH),
        )
        return hits, index

    def _keyword_index(self, passages: list[Passage]) -> KeywordIndex:
        # The title joins each passage's keywords: questions name the subject ("When did Tesla
        # die?") that paragraphs leave implicit. BM25 Recall@1 on SQuAD dev +0.6 points.
        titles = {a.id: a.title for a in self.store.list_articles(self.name)}
        texts = [f"{titles.get(p.article_id, '')}\n{p.text}" for p in passages]
        return KeywordIndex([p.id for p in passages], texts)

    # the derived indexes

    def _indexes(self, *, keywords: bool = True) -> tuple[VectorIndex | None, KeywordIndex | None]:
        """The current indexes, repaired from SQLite if another process (or a crash) moved on.

        The keyword index is rebuilt only when asked for (it is rebuilt whole, unlike the vector
        index): adding a thousand articles in a row rebuilds it once, at the next question.
        """
        version = self.store.data_version()
        with self._lock:
            # Unchanged since the last look unless another connection committed: a warm
            # question then skips counting the passages, which grows with the collection.
            unchanged = self._signature is not None and version == self._data_version
            signature = self._signature if unchanged else self.store.signature(self.name)
            self._data_version = version
            if self._signature != signature or self._vectors is None:
                self._vectors = self._sync_vectors()
                self._keywords = None
                self._signature = signature
            if keywords and self._keywords is None:
                self._keywords = self._keyword_index(self.store.passages(self.name))
            return self._vectors, self._keywords

    def _refresh(self) -> None:
        with self._lock:
            self._signature = None
        self._indexes(keywords=False)

    def _sync_vectors(self) -> VectorIndex | None:
        model = self.store.collection_model(self.name)
        if model is None:
            return None
        name, dim = model
        # Load, repair and save as one step across processes: concurrent writers never save
        # over each other's vectors, and any temp file found meanwhile is a dead process's.
        with file_lock(self._lock_path):
            _remove_dead_temp_files(self.index_path)
            vectors = self._vectors
            if vectors is not None and (vectors.model, vectors.dim) != model:
                vectors = None  # another process re-embedded the collection with another model
            if vectors is None:
                vectors = self._load_index(name, dim)
            if vectors is not None and not vectors.suits(self.store.signature(self.name)[0]):
                vectors = None  # grown past its kind of index (or shrunk): rebuilt from SQLite
            if vectors is None:
                vectors = self._build_from_store(name, dim)
                self._save_index(vectors)
            elif self._reconcile(vectors, dim):
                self._save_index(vectors)
            return vectors

    def _load_index(self, model: str, dim: int) -> VectorIndex | None:
        if not self.index_path.exists():
            return None
        try:
            return VectorIndex.load(self.index_path, model=model, dim=dim)
        except Exception:  # derived data: whatever is wrong with the files, rebuild from SQLite
            return None

    def _reconcile(self, vectors: VectorIndex, dim: int) -> bool:
        """Add the stored passages the index lacks, drop those it has that are gone."""
        stored = set(self.store.passage_ids(self.name).tolist())
        present = vectors.ids()
        missing = sorted(stored - present)
        extra = sorted(present - stored)
        vectors.remove(np.array(extra, dtype=np.int64))
        for ids, batch in self.store.iter_embeddings(self.name, dim, ids=missing):
            vectors.add(batch, ids)
        return bool(missing or extra)

    def _save_index(self, vectors: VectorIndex) -> None:
        try:
            vectors.save(self.index_path)
        except OSError as exc:
            # SQLite already holds everything; failing the add over derived data would mislead.
            log.warning(
                "Could not save the index %s (%s); it is rebuilt the next time it is opened.",
                self.index_path,
                exc.strerror or exc,
            )

    def _build_from_store(self, model: str, dim: int) -> VectorIndex:
        ids_parts, vector_parts = [], []
        for ids, batch in self.store.iter_embeddings(self.name, dim):
            ids_parts.append(ids)
            vector_parts.append(batch)
        ids = np.concatenate(ids_parts) if ids_parts else np.zeros(0, dtype=np.int64)
        vectors = np.vstack(vector_parts) if vector_parts else np.zeros((0, dim), np.float32)
        return VectorIndex.build(vectors, ids, model=model, dim=dim)

    def rebuild(self, *, reembed: bool = False, progress: Progress | None = None) -> RebuildResult:
        """Re-create the index from SQLite; with reembed, embed every passage again first.

        Questions keep using the old index until the new one is swapped in.
        """
        started = time.perf_counter()
        if reembed:
            self._reembed(progress)
        model = self.store.collection_model(self.name)
        if model is None:
            return RebuildResult(self.name, 0, reembed, "none", time.perf_counter() - started)
        if progress:
            progress("Indexing", 0, 1)
        vectors = self._build_from_store(*model)  # the long part, holding no lock
        signature = self.store.signature(self.name)
        with file_lock(self._lock_path):
            _remove_dead_temp_files(self.index_path)
            self._reconcile(vectors, model[1])  # passages added or removed during the build
            self._save_index(vectors)
        passages = self.store.passages(self.name)
        keywords = self._keyword_index(passages)
        with self._lock:
            self._vectors, self._keywords = vectors, keywords
            self._signature = signature
        if progress:
            progress("Indexing", 1, 1)
        return RebuildResult(
            self.name, len(vectors), reembed, vectors.kind, time.perf_counter() - started
        )

    def _reembed(self, progress: Progress | None) -> None:
        """Embed every passage again, staged beside the old vectors and swapped in at the end.

        Until the swap, questions use the old vectors; a re-embedding that is killed resumes
        from what it staged when run again with the same model.
        """
        embedder = self.library.embedder
        model, dim = embedder.name, embedder.dim
        total = self.store.count(self.name)[1]
        # Articles added meanwhile (with the old model) are embedded in a further round.
        for _ in range(REEMBED_ROUNDS):
            todo = self.store.unstaged_passages(self.name, model, dim)
            done = max(0, total - len(todo))
            chunks = [todo[i : i + REEMBED_CHUNK] for i in range(0, len(todo), REEMBED_CHUNK)]
            # The next chunk is queued before this one is stored: no core waits on SQLite.
            started = _one_ahead(
                chunks,
                lambda chunk: (chunk, embedder.start_documents([p.text for p in chunk])),
                lambda item: item[1].cancel(),
            )
            with contextlib.closing(started):  # on an error, the queued chunk is dropped now
                for chunk, pending in started:
                    vectors = pending.result()
                    ids = np.array([p.id for p in chunk])
                    self.store.stage_embeddings(self.name, model, ids, vectors)
                    done += len(chunk)
                    if progress:
                        progress("Re-embedding", min(done, total), total)
            if self.store.swap_staged(self.name, model, dim):
                return
            total = self.store.count(self.name)[1]
        raise StorageError(
            "Articles kept arriving faster than they could be re-embedded; "
            "run `articlebot rebuild --reembed` again when adding has stopped."
        )
