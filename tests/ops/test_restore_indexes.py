"""What a restore brings back answers from the store:

- every collection name `add` takes (leading dots, spaces, other scripts, long names) backs up
  and restores, and the restored folder lists and answers it;
- the indexes are built from the restored store: a backup's FAISS file with other vectors, or a
  keyword index of another collection sealed as this one's, answers nothing.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from hostile_backups import WORDS, library, reseal
from restored_folders import listed, run

from index.cli import main
from index.records import Document
from index.search.embedded_backend import EmbeddedBackend
from index.search.index_file import file_stem
from index.search.vectors import VectorIndex
from index.storage.data_folder import DataFolder
from index.storage.sqlite_store import Store
from index.text.analysis import analyze

# collection names


NAMES = [".x", "..x", ".", "..", "a b", "Überblick", "日本語のニュース", "-dash", "x" * 300]


def test_every_collection_name_add_takes_backs_up_and_restores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARTICLEBOT_DATA_DIR", raising=False)
    data, article = tmp_path / "data", tmp_path / "pier.txt"
    for n, name in enumerate(NAMES):
        article.write_text(f"Harbor news {n}\n\n{WORDS[n % 3]}\n", encoding="utf-8")
        lib = library(data)
        try:
            code = main(
                ["add", str(article), f"--collection={name}", "--data-dir", str(data), "--json"],
                lib,
            )
        finally:
            lib.close()
        assert code == 0, name
    capsys.readouterr()
    stems = {p.name for p in (data / "indexes").glob("*.faiss")}
    assert {".x.faiss", "..x.faiss", "..faiss", "...faiss"} <= stems

    code, out, err = run(capsys, "backup", str(tmp_path / "b"), "--data-dir", str(data), "--json")
    assert code == 0, err
    assert json.loads(out)["articles"] == len(NAMES)
    code, out, err = run(capsys, "restore", str(tmp_path / "b"), "--data-dir", "new", "--json")
    assert code == 0, err
    assert json.loads(out)["articles"] == len(NAMES)
    for name in NAMES:
        restored = listed(capsys, tmp_path / "new", name)
        assert restored == listed(capsys, data, name) and len(restored) == 1, name
        assert (tmp_path / "new" / "indexes" / f"{file_stem(name)}.faiss").is_file()
    copy = library(tmp_path / "new")
    try:
        answer = copy.collection(".x").ask("When will the pier open?")
        assert not answer.abstained and answer.citations[0].title == "Harbor news 0"
    finally:
        copy.close()


# indexes from the store, never from the backup


def stored_vectors(data_dir: Path, collection: str = "default") -> tuple[np.ndarray, np.ndarray]:
    store = Store(DataFolder(data_dir).store)
    try:
        model = store.collection_model(collection)
        assert model is not None
        batches = list(store.iter_embeddings(collection, model[1]))
    finally:
        store.close()
    return np.concatenate([i for i, _ in batches]), np.concatenate([v for _, v in batches])


def test_a_faiss_file_with_other_vectors_is_not_what_answers(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same ids, same count, same sidecar: only the vectors are others. The restored folder
    finds each stored passage by its own vector, as the source does."""
    ids, vectors = stored_vectors(work / "data")
    (faiss_file,) = (work / "backup" / "indexes").glob("*.faiss")
    noise = np.random.default_rng(5).standard_normal(vectors.shape).astype(np.float32)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    forged = VectorIndex.build(noise, ids, model="all-MiniLM-L6-v2", dim=vectors.shape[1])
    forged.save(faiss_file)
    reseal(work / "backup", f"indexes/{faiss_file.name}")
    reseal(work / "backup", f"indexes/{faiss_file.with_suffix('.json').name}")

    code, _, err = run(capsys, "restore", str(work / "backup"), "--data-dir", str(work / "new"))
    assert code == 0, err
    store = Store(DataFolder(work / "new").store)
    try:
        backend = EmbeddedBackend(store, "default", work / "new")
        for pid, vector in zip(ids.tolist(), vectors, strict=True):
            scores, found = backend.dense(vector, 1)
            assert found.tolist() == [pid] and scores[0] > 0.999
    finally:
        store.close()
    restored = (work / "new" / "indexes" / faiss_file.name).read_bytes()
    assert restored == (work / "data" / "indexes" / faiss_file.name).read_bytes()


def test_another_collections_keyword_index_sealed_as_this_ones_is_not_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two collections of 3 passages: `other`'s keyword index, given `default`'s ids and
    signature, put in `default`'s place and resealed. The restored `default` finds its own
    passages by their words, and nothing of `other`'s."""
    monkeypatch.chdir(tmp_path)
    lib = library(tmp_path / "data")
    others = [
        "Volcanic ash grounded flights across the archipelago while seismologists watched.",
        "The orchestra premiered a symphony written by a teenage composer from the valley.",
        "Wheat prices climbed after drought withered the harvest on the southern plains.",
    ]
    for n, (mine, theirs) in enumerate(zip(WORDS, others, strict=True)):
        lib.collection().add(Document(title=f"Harbor news {n}", paragraphs=[mine]))
        lib.collection("other").add(Document(title=f"World news {n}", paragraphs=[theirs]))
    for name in ("default", "other"):
        lib.collection(name).ask("What happened?")  # each keyword index saved
    lib.close()
    assert run(capsys, "backup", "b", "--data-dir", "data")[0] == 0

    indexes = tmp_path / "b" / "indexes"
    own = indexes / "default.bm25.npz"
    with np.load(own) as saved:
        ids, signature = saved["ids"], saved["signature"]
    with np.load(indexes / "other.bm25.npz") as saved:
        forged = {name: saved[name] for name in saved.files}
    forged["ids"], forged["signature"] = ids, signature
    with own.open("wb") as out:
        np.savez(out, **forged)
    reseal(tmp_path / "b", "indexes/default.bm25.npz")

    code, _, err = run(capsys, "restore", "b", "--data-dir", "new")
    assert code == 0, err
    store = Store(DataFolder(tmp_path / "new").store)
    try:
        keywords = EmbeddedBackend(store, "default", tmp_path / "new").keywords()
        by_id = {p.id: p.text for p in store.passages("default")}
        _, found = keywords.search(analyze("dredging storm exhibition pier bakery", "en"), 3)
        assert sorted(found.tolist()) == sorted(by_id)
        for text in WORDS:
            _, top = keywords.search(analyze(text, "en"), 1)
            assert by_id[int(top[0])] == text
        _, found = keywords.search(analyze("volcanic symphony wheat", "en"), 3)
        assert found.tolist() == []
    finally:
        store.close()
    saved_again = (tmp_path / "new" / "indexes" / "default.bm25.npz").read_bytes()
    assert saved_again == (tmp_path / "data" / "indexes" / "default.bm25.npz").read_bytes()
    source, copy = library(tmp_path / "data"), library(tmp_path / "new")
    try:
        question = "Which road did the storm close?"
        assert (
            copy.collection().ask(question).to_json() == source.collection().ask(question).to_json()
        )
    finally:
        source.close()
        copy.close()


def test_a_backup_whose_indexes_are_missing_restores_them(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(work / "backup" / "indexes")
    code, out, err = run(
        capsys, "restore", str(work / "backup"), "--data-dir", str(work / "new"), "--json"
    )
    assert code == 0, err
    assert json.loads(out)["passages"] == 3
    names = sorted(p.name for p in (work / "new" / "indexes").iterdir() if p.suffix != ".lock")
    assert names == ["default.bm25.npz", "default.faiss", "default.json"]
    code, out, _ = run(capsys, "stats", "--data-dir", str(work / "new"), "--json")
    assert code == 0 and json.loads(out)["indexed"] == json.loads(out)["passages"] == 3
