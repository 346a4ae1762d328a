"""A library: one data folder, the embedding model (loaded once), and its open collections."""

from __future__ import annotations

import errno
import threading
from collections import OrderedDict
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from index.collection import Collection
from index.embedding.embedder import (
    Embedder,
    Runtime,
    load_embedder,
    model_dimension,
    model_name,
)
from index.embedding.registry import UnknownModel, get_model
from index.errors import BadInput, IndexMismatch
from index.ingest.readers import Limits
from index.search.embedded_backend import EmbeddedBackend
from index.search.interface import CollectionBackend
from index.search.spelling import load_word_list
from index.storage.claims import Claim, served_by_folder
from index.storage.collection_settings import CollectionSettings
from index.storage.conversations import Conversations
from index.storage.data_folder import DataFolder, refuse_cut_short
from index.storage.interface import ArticleStore
from index.storage.sqlite_store import Store
from index.text import ENGLISH
from index.writer import OpenAICompatible, Writer, WriterSettings

if TYPE_CHECKING:
    from index.storage.postgres import PgStore

__all__ = ["Library", "Totals"]


@dataclass(frozen=True)
class Totals:
    """Counts over every collection of a library, and the index memory of the open ones."""

    collections: int
    articles: int
    passages: int
    index_memory_bytes: int


class Library:
    """One data folder: the store, the model (loaded once), and the open collections."""

    def __init__(
        self,
        data_dir: Path,
        *,
        model_path: str | None = None,
        backend: Runtime = "auto",
        limits: Limits | None = None,
        max_question_chars: int = 1_000,
        embedder: Embedder | None = None,
        index_memory_bytes: int = 128_000_000,
        database_url: str | None = None,
        model_cache: Path | None = None,
        writer: WriterSettings | Writer | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        # The optional writer the edges ask after an answer (index/writer): a peer like the
        # database, one client for every collection, its writes under way capped in it.
        self.writer: Writer | None = (
            OpenAICompatible(writer) if isinstance(writer, WriterSettings) else writer
        )
        # The model's int8 export: made once in `model_cache`, which every data folder and
        # process of the user shares (Settings passes it), or in this folder's own `models/`
        # without one. A folder an earlier release made has its own `models/`: an export there
        # that this release would make is read in place rather than made again.
        self._own_models = self.data_dir / "models"
        self.model_cache = Path(model_cache) if model_cache else self._own_models
        self.limits = limits or Limits()
        self.max_question_chars = max_question_chars
        self._model_path = model_path
        self._backend = backend
        self._embedder = embedder
        # The wiring: which store, and so which backends and which tables for the bot's own
        # records. Everything past it sees only the store interface.
        self._sqlite: Store | None = None
        self._postgres: PgStore | None = None
        self.store: ArticleStore
        if database_url:
            # Imported only here: the embedded default needs no database driver loaded.
            from index.storage.postgres import PgStore

            self.store = self._postgres = PgStore(database_url, self.embedder_dim())
        else:
            refuse_cut_short(self.data_dir)
            self.store = self._sqlite = Store(DataFolder(self.data_dir).store)
        self._embedder_lock = threading.Lock()
        # Models other than the default, loaded for the collections embedded with them (an
        # older release's all-MiniLM-L6-v2) until `rebuild --reembed` moves them on.
        self._other_embedders: dict[str, Embedder] = {}
        # Open collections, least recently used first: a bot in thousands of servers keeps the
        # indexes of the busy ones in memory, within this budget, and reloads the others.
        self._collections: OrderedDict[str, Collection] = OrderedDict()
        self._collections_lock = threading.Lock()
        self.index_memory_bytes = index_memory_bytes

    @property
    def embedder(self) -> Embedder:
        with self._embedder_lock:
            if self._embedder is None:
                self._embedder = self._load(self._model_path)
            return self._embedder

    def embedder_for(self, name: str | None) -> Embedder:
        """The model a collection was embedded with (`name`, stored: its id, resolved through
        the registry), or the default for a new one (None). Each is loaded at its first use, so
        a second model costs memory only while collections made with it are asked."""
        if name is None or name == self.embedder_name():
            return self.embedder
        with self._embedder_lock:
            if name not in self._other_embedders:
                try:
                    model = get_model(name)
                except UnknownModel:
                    raise IndexMismatch(
                        f"This collection was embedded with {name}, which this installation "
                        "cannot load; run `articlebot rebuild --reembed` to embed it again."
                    ) from None
                self._other_embedders[name] = self._load(model.id)
            return self._other_embedders[name]

    def _load(self, model: str | None) -> Embedder:
        earlier = [self._own_models] if self._own_models != self.model_cache else []
        try:
            return load_embedder(model, self._backend, self.model_cache, earlier=earlier)
        except OSError as exc:
            unwritable = (PermissionError, NotADirectoryError, FileExistsError)
            if not isinstance(exc, unwritable) and exc.errno != errno.EROFS:
                raise
            # Only an error on the cache's own path is the cache's: the package's weights or a
            # data folder that cannot be read say so in their own words.
            where = exc.filename
            if where is None or not Path(str(where)).resolve().is_relative_to(
                self.model_cache.resolve()
            ):
                raise
            raise BadInput(
                f"The model cache {self.model_cache} cannot be written ({exc.strerror}); set "
                "ARTICLEBOT_MODEL_CACHE to a folder this user can write to."
            ) from exc

    def release_unused_models(self) -> None:
        """Let go of the models no open collection is embedded with any more."""
        in_use = {self.store.collection_model(name) for name in list(self._collections)}
        names = {m[0] for m in in_use if m}
        with self._embedder_lock:
            for name in [n for n in self._other_embedders if n not in names]:
                del self._other_embedders[name]

    def warm_up(self) -> None:
        """Load what a first question would otherwise wait for: the model, and the English word
        list (37 MB) only where a collection holds English articles, the only ones whose
        questions are respelt (search/spelling.py)."""
        if any(self._holds_english(name) for name in self.store.collection_names()):
            load_word_list()
        _ = self.embedder

    def _holds_english(self, collection: str) -> bool:
        languages = self.store.collection_languages(collection)
        return not languages or ENGLISH in languages  # none known yet: read as English

    @property
    def model_loaded(self) -> bool:
        """Whether the embedding model is in memory (questions need it)."""
        return self._embedder is not None

    def embedder_name(self) -> str:
        return self._embedder.name if self._embedder else model_name(self._model_path)

    def embedder_dim(self) -> int:
        """The model's vector size, read from its files if the model is not loaded yet."""
        return self._embedder.dim if self._embedder else model_dimension(self._model_path)

    def collection(self, name: str = "default") -> Collection:
        name = name.strip() or "default"
        with self._collections_lock:
            if name not in self._collections:
                self._collections[name] = Collection(
                    name,
                    store=self.store,
                    backend=self.open_backend(name),
                    model=self,
                    limits=self.limits,
                    max_question_chars=self.max_question_chars,
                )
            self._collections.move_to_end(name)
            self._keep_within_budget()
            return self._collections[name]

    def folder_store(self) -> Store:
        """The data folder's SQLite store, what `migrate` copies from: this library's own, or
        opened beside it when the articles are in PostgreSQL (the caller then closes it)."""
        return self._sqlite or Store(DataFolder(self.data_dir).store)

    def open_backend(self, name: str) -> CollectionBackend:
        """Where one collection's passages and indexes live."""
        if self._postgres is None:
            assert self._sqlite is not None
            return EmbeddedBackend(self._sqlite, name, self.data_dir)
        from index.storage.postgres import PgBackend

        return PgBackend(self._postgres, name)

    def conversations(self, **options: Any) -> Conversations:
        """The conversations and votes of this library's collections (the caller closes it):
        in the data folder, or in the database beside the articles, shared by every process."""
        if self._postgres is None:
            return Conversations.in_folder(self.data_dir, **options)
        from index.storage.postgres import PgDatabase

        return Conversations(PgDatabase(self._postgres), **options)

    def collection_settings(self) -> CollectionSettings:
        """What each collection's admins chose (the caller closes it), kept as conversations
        are."""
        if self._postgres is None:
            return CollectionSettings.in_folder(self.data_dir)
        from index.storage.postgres import PgDatabase

        return CollectionSettings(PgDatabase(self._postgres))

    def _keep_within_budget(self) -> None:
        """Close the least recently used collections' indexes while over the memory budget.

        The most recent one stays open whatever its size: it is the one being asked.
        """
        held = {name: c.backend.nbytes() for name, c in self._collections.items()}
        total = sum(held.values())
        for name in list(self._collections)[:-1]:
            if total <= self.index_memory_bytes:
                break
            self._collections.pop(name).backend.unload()
            total -= held[name]

    def close(self) -> None:
        self.store.close()

    def claim_shards(
        self, count: int | None, shards: Sequence[int] | None
    ) -> AbstractContextManager[Claim]:
        """Held while a bot process serves `shards` of `count` (None: all of them; a count of
        None: as many as Discord recommends): a second process for any of them, or with
        another count or release, on this data folder or this database, stops in one sentence
        that names the first (index/storage/claims.py). The claim says while it is not held
        (PostgreSQL's can be lost and is taken again: Claim.problem())."""
        if self._postgres is not None:
            from index.storage.postgres.claims import served_by_database

            return served_by_database(self._postgres.url, count, shards)
        return served_by_folder(self.data_dir, count, shards)

    def totals(self) -> Totals:
        """What the whole store holds, over every collection (for metrics and `stats`)."""
        names = self.store.collection_names()
        articles = passages = 0
        for name in names:
            counted = self.store.count(name)
            articles, passages = articles + counted[0], passages + counted[1]
        return Totals(len(names), articles, passages, self.index_memory())

    def index_memory(self) -> int:
        """Bytes of index the open collections hold in memory (within index_memory_bytes)."""
        with self._collections_lock:
            return sum(c.backend.nbytes() for c in self._collections.values())
