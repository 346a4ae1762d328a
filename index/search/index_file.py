"""One collection's FAISS file: loaded, repaired from SQLite, and saved atomically under a lock.

The file is derived data. Whatever is wrong with it (missing, damaged, behind or ahead of
SQLite, made by another model) is mended from the store, and every load-repair-save runs under
a lock shared by all processes on the data folder, so concurrent writers never save over each
other's vectors.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import shutil
from pathlib import Path

import numpy as np

from index.search.vectors import VectorIndex
from index.storage.data_folder import index_files
from index.storage.locking import file_lock
from index.storage.sqlite_store import Store

__all__ = ["IndexFile", "file_stem"]

log = logging.getLogger(__name__)


def file_stem(name: str) -> str:
    """A file name for a collection name: safe characters only, distinct names kept distinct."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name)[:64]
    if safe != name:
        safe += "-" + hashlib.sha1(name.encode()).hexdigest()[:8]
    return safe


def _remove_dead_temp_files(index_path: Path) -> None:
    """Delete the temp files of a save that a killed process left; call only under the lock.

    `VectorIndex.save` writes `<name><8 random chars>.tmp` (tempfile.mkstemp) for the index and
    its sidecar (and the saved keyword index); the exact pattern spares other collections' files.
    """
    names = "|".join(re.escape(p.name) for p in index_files(index_path))
    dead = re.compile(rf"(?:{names})[a-z0-9_]{{8}}\.tmp")
    with contextlib.suppress(FileNotFoundError), os.scandir(index_path.parent) as entries:
        for entry in entries:
            if dead.fullmatch(entry.name):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


class IndexFile:
    """The FAISS file of one collection of one store."""

    def __init__(self, path: Path, store: Store, collection: str) -> None:
        self.path = path
        self.store = store
        self.collection = collection
        self._lock_path = path.with_suffix(".lock")

    def size_bytes(self) -> int:
        return self.path.stat().st_size if self.path.exists() else 0

    def sync(self, current: VectorIndex | None) -> VectorIndex | None:
        """The index in step with SQLite: `current` (or the file) repaired, or rebuilt whole."""
        model = self.store.collection_model(self.collection)
        if model is None:
            return None
        name, dim = model
        # Load, repair and save as one step across processes: concurrent writers never save
        # over each other's vectors, and any temp file found meanwhile is a dead process's.
        with file_lock(self._lock_path):
            _remove_dead_temp_files(self.path)
            vectors = current
            if vectors is not None and (vectors.model, vectors.dim) != model:
                vectors = None  # another process re-embedded the collection with another model
            if vectors is None:
                vectors = self._load(name, dim)
            if vectors is not None and not vectors.suits(self.store.signature(self.collection)[0]):
                vectors = None  # grown past its kind of index (or shrunk): rebuilt from SQLite
            if vectors is None:
                vectors = self.build(name, dim)
                self._save(vectors)
            elif self._reconcile(vectors, dim):
                self._save(vectors)
            return vectors

    def build(self, model: str, dim: int) -> VectorIndex:
        """A new index of every stored vector (the long part of a rebuild; holds no lock)."""
        return VectorIndex.build_from(
            lambda: self.store.iter_embeddings(self.collection, dim),
            self.store.count(self.collection)[1],
            model=model,
            dim=dim,
        )

    def install(self, vectors: VectorIndex) -> None:
        """Save a freshly built index, with what was added or removed while it was built."""
        with file_lock(self._lock_path):
            _remove_dead_temp_files(self.path)
            self._reconcile(vectors, vectors.dim)
            self._save(vectors)

    def _load(self, model: str, dim: int) -> VectorIndex | None:
        if not self.path.exists():
            return None
        try:
            return VectorIndex.load(self.path, model=model, dim=dim)
        except Exception:  # derived data: whatever is wrong with the files, rebuild from SQLite
            return None

    def _reconcile(self, vectors: VectorIndex, dim: int) -> bool:
        """Add the stored passages the index lacks, drop those it has that are gone."""
        stored = set(self.store.passage_ids(self.collection).tolist())
        present = vectors.ids()
        missing = sorted(stored - present)
        extra = sorted(present - stored)
        vectors.remove(np.array(extra, dtype=np.int64))
        for ids, batch in self.store.iter_embeddings(self.collection, dim, ids=missing):
            vectors.add(batch, ids)
        return bool(missing or extra)

    def _save(self, vectors: VectorIndex) -> None:
        # A save writes a whole new file beside the old one. On a nearly full disk it could take
        # the room an add of another process needs, for derived data that is mended from SQLite
        # anyway: without twice its size free, the file is left as it is.
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            free = None
        if free is not None and free < 2 * vectors.nbytes():
            log.warning(
                "Not saving the index %s: %d MB free on its disk, under twice its %d MB; it is "
                "mended from the store each time it is opened until there is room.",
                self.path,
                free // 1_000_000,
                vectors.nbytes() // 1_000_000,
            )
            return
        try:
            vectors.save(self.path)
        except OSError as exc:
            # SQLite already holds everything; failing the add over derived data would mislead.
            log.warning(
                "Could not save the index %s (%s); it is rebuilt the next time it is opened.",
                self.path,
                exc.strerror or exc,
            )
