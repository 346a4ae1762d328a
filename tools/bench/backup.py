"""`articlebot backup` and `restore` timed on a data folder, and the derived indexes copied
against rebuilt (the choice ops/backup.py makes).

    .venv/bin/python -m tools.bench.backup --squad            # SQuAD dev, 2,067 paragraphs
    .venv/bin/python -m tools.bench.backup --synthetic 100000  # random vectors, short texts

`--squad` adds the SQuAD v1.1 dev paragraphs (../shared) as 48 articles with the real model
(`--models DIR` reuses an int8 export, as the tests' `.venv/articlebot-test-models`);
`--synthetic N` stores N passages of 40 random words with random unit vectors, straight into
the store, for sizes past what the model embeds quickly. Either way a question is asked first,
so the folder holds what a running bot leaves (the FAISS file, its keyword index saved). It
prints one JSON object: the folder's size, the backup's time and size, the restore's time
(checks included), and the time to rebuild the indexes from the store instead of copying them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from index.library import Library
from index.ops.backup import backup
from index.ops.restore import restore
from index.records import Document
from index.search.embedded_backend import EmbeddedBackend
from index.settings import model_cache
from index.storage.data_folder import DataFolder
from index.storage.sqlite_store import Store


def _folder_bytes(folder: Path) -> int:
    return sum(
        p.stat().st_size for p in folder.rglob("*") if p.is_file() and "models" not in p.parts
    )


def fill_squad(data_dir: Path, models: Path | None) -> None:
    from tools.bench.squad_data import squad_articles

    if models is not None:
        data_dir.mkdir(parents=True)
        (data_dir / "models").symlink_to(models.resolve(), target_is_directory=True)
    library = Library(data_dir, model_cache=model_cache(os.environ))
    collection = library.collection()
    for title, paragraphs in squad_articles(10_000):
        collection.add(Document(title=title, paragraphs=paragraphs, source="text"))
    collection.ask("Which NFL team represented the AFC at Super Bowl 50?")
    library.close()


def fill_synthetic(data_dir: Path, passages: int, dim: int = 384) -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(50_000)]
    pick = random.Random(7)
    store = Store(DataFolder(data_dir).store)
    store.set_collection_model("default", "all-MiniLM-L6-v2", dim)
    per_article = 1_000
    for number in range(0, passages, per_article):
        count = min(per_article, passages - number)
        texts = [" ".join(pick.choices(words, k=40)) for _ in range(count)]
        vectors = rng.standard_normal((count, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        doc = Document(title=f"Synthetic {number}", paragraphs=texts, source="text")
        chunks = [(i + 1, 0, text) for i, text in enumerate(texts)]
        store.insert_article("default", doc, f"hash-{number}", chunks, vectors, None)
    backend = EmbeddedBackend(store, "default", data_dir)
    backend.state()  # the FAISS file, as the first question saves it
    backend.keywords()  # and the keyword index
    store.close()


def _top10(data_dir: Path, queries: np.ndarray) -> list[list[int]]:
    """Each query's ten nearest passages in the folder's dense index."""
    store = Store(DataFolder(data_dir).store)
    try:
        backend = EmbeddedBackend(store, "default", data_dir)
        return [backend.dense(q, 10)[1].tolist() for q in queries]
    finally:
        store.close()


def measure(data_dir: Path, work: Path) -> dict[str, float | int | bool]:
    started = time.perf_counter()
    copied = backup(data_dir, work / "backup")
    backup_s = time.perf_counter() - started
    started = time.perf_counter()
    restore(work / "backup", work / "restored")
    restore_s = time.perf_counter() - started
    queries = np.random.default_rng(3).standard_normal((200, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    same = _top10(data_dir, queries) == _top10(work / "restored", queries)
    # What restoring would cost with the indexes left out of the backup: both built again.
    shutil.rmtree(DataFolder(work / "restored").indexes)
    store = Store(DataFolder(work / "restored").store)
    started = time.perf_counter()
    EmbeddedBackend(store, "default", work / "restored").rebuild()
    rebuild_s = time.perf_counter() - started
    store.close()
    index_bytes = sum(p.stat().st_size for p in DataFolder(work / "backup").indexes.iterdir())
    return {
        "articles": copied.articles,
        "passages": copied.passages,
        "folder_mb": round(_folder_bytes(data_dir) / 1e6, 1),
        "backup_mb": round(copied.bytes / 1e6, 1),
        "backup_indexes_mb": round(index_bytes / 1e6, 1),
        "backup_s": round(backup_s, 2),
        "restore_s": round(restore_s, 2),
        "rebuild_indexes_s": round(rebuild_s, 2),
        "restored_top10_same": same,  # 200 random queries, the restored index against the source
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    kind = parser.add_mutually_exclusive_group(required=True)
    kind.add_argument("--squad", action="store_true", help="SQuAD v1.1 dev's paragraphs")
    kind.add_argument("--synthetic", type=int, metavar="N", help="N synthetic passages")
    parser.add_argument("--models", type=Path, help="an int8 export folder to reuse")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data_dir = work / "data"
        started = time.perf_counter()
        if args.squad:
            fill_squad(data_dir, args.models)
        else:
            fill_synthetic(data_dir, args.synthetic)
        filled_s = time.perf_counter() - started
        print(json.dumps({**measure(data_dir, work), "fill_s": round(filled_s, 1)}))


if __name__ == "__main__":
    main()
