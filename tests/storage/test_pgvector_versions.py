"""PostgreSQL with the pgvector users have: each dense-search path on a test server of its own
(pgvector 0.6: one wide beam, exact where it falls short; pgvector 0.8: iterative index scans),
and a pgvector too old for HNSW refused in one sentence."""

from __future__ import annotations

import numpy as np
import pytest

import index.storage.postgres as pg
from index.errors import StorageError
from index.ops.index_bench import synthetic_vectors
from index.records import Document

DIM = 16


def _fill(store: pg.PgStore, collection: str, vectors: np.ndarray) -> None:
    store.set_collection_model(collection, "synthetic", DIM)
    texts = [f"passage {i}" for i in range(len(vectors))]
    doc = Document(collection, texts, source="test")
    cut = [(i + 1, 0, t) for i, t in enumerate(texts)]
    store.insert_article(collection, doc, collection, cut, vectors, None)


def test_a_large_collection_among_others_finds_its_exact_top_k(
    pgvector_database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the exact limit the HNSW index is used. With pgvector 0.8 the scan goes on until it
    has the collection's top k; before 0.8, where one scan cannot fill them among other
    collections' rows (a narrow beam), the search is exact."""
    monkeypatch.setattr("index.storage.postgres.backend.EXACT_LIMIT", 100)
    monkeypatch.setattr("index.storage.postgres.store.EXACT_LIMIT", 100)
    # a beam of 20 rows: the small collection's rows are never in it
    monkeypatch.setattr("index.storage.postgres.vectors._beam", lambda db, name, k: 20)
    store = pg.PgStore(pgvector_database_url, DIM)
    try:
        vectors = synthetic_vectors(1_000, DIM, seed=3)
        _fill(store, "big", vectors[:800])
        _fill(store, "small", vectors[800:])
        queries = vectors[:20] + 0.01  # near the big collection's rows, far from the small one's
        for name in ("big", "small"):
            backend = pg.PgBackend(store, name)
            state = backend.state()
            assert (state.kind, state.search) == ("hnsw", store.approximate_search)
            found = exact = 0
            for q in queries:
                q = q / np.linalg.norm(q)
                _, ids = backend.dense(q, 10)
                truth = [i for i, _ in store.nearest(name, q, 10, DIM, approximate=False)]
                assert len(ids) == 10  # the filter never leaves the top k short
                found += len(set(ids.tolist()) & set(truth))
                exact += ids.tolist() == truth
            assert found / (10 * len(queries)) >= 0.95, name
        if not store.iterative_scans:
            # the small collection's rows are never in the beam: its answers are the exact search's
            assert exact == len(queries)
    finally:
        store.close()


def test_each_test_server_takes_the_path_its_pgvector_has(
    pgvector_database_url: str, request: pytest.FixtureRequest
) -> None:
    server = request.node.callspec.params["pgvector_database_url"]  # "0.6" or "0.8"
    store = pg.PgStore(pgvector_database_url, DIM)
    try:
        version, path = store.pgvector, store.approximate_search
    finally:
        store.close()
    assert ".".join(map(str, version[:2])) == server
    assert path == {"0.6": "hnsw-or-exact", "0.8": "hnsw-iterative"}[server]


def test_a_pgvector_without_hnsw_is_refused_in_one_sentence(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("index.storage.postgres.store._pgvector_version", lambda db: (0, 4, 1))
    with pytest.raises(StorageError) as refused:
        pg.PgStore(database_url, DIM)
    message = str(refused.value)
    assert "pgvector 0.4.1" in message and "0.5 or newer" in message
    assert "ALTER EXTENSION vector UPDATE" in message


def test_the_beam_grows_as_a_collections_share_of_the_table_shrinks(database_url: str) -> None:
    from index.storage.postgres.vectors import HNSW_EF_FLOOR, HNSW_EF_MAX, _beam

    store = pg.PgStore(database_url, DIM)
    try:
        vectors = synthetic_vectors(1_000, DIM, seed=4)
        _fill(store, "most", vectors[:950])
        _fill(store, "few", vectors[950:])
        with store._conn() as db:
            db.execute("ANALYZE passages")  # the table's row count, as autovacuum keeps it
            most, few = _beam(db, "most", 10), _beam(db, "few", 10)
    finally:
        store.close()
    assert most == HNSW_EF_FLOOR  # nearly the whole table: the floor
    assert HNSW_EF_FLOOR < few <= HNSW_EF_MAX  # 5% of it: 4 x 10 / 0.05 = 800


def test_an_hnsw_index_larger_than_shared_buffers_is_named_in_the_log(
    database_url: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The test server's shared_buffers (128 MB) holds a small index: no warning. Against a
    server whose buffers were smaller than the index, the log says what to set."""
    monkeypatch.setattr("index.storage.postgres.backend.EXACT_LIMIT", 100)
    monkeypatch.setattr("index.storage.postgres.store.EXACT_LIMIT", 100)
    with caplog.at_level("WARNING", logger="index.storage.postgres"):
        store = pg.PgStore(database_url, DIM)
        try:
            with store.bulk_load(DIM):
                _fill(store, "big", synthetic_vectors(1_000, DIM, seed=5))
            assert store.vector_index_bytes(DIM) > 0
            assert not caplog.records
            monkeypatch.setattr(
                "index.storage.postgres.vectors._shared_buffers_bytes", lambda db: 8192
            )
            store.check_buffers()
        finally:
            store.close()
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "larger than PostgreSQL's shared_buffers (8 kB)" in warning
    assert "set shared_buffers above" in warning
