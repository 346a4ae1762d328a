"""Near-duplicate lookups in a collection of 10,000 articles: time, and what is found.

    .venv/bin/python -m tools.bench.near_duplicates [--articles 10000] [--probes 200]

Synthetic articles of 300 words drawn from 5,000 (so that unrelated articles share words but
hardly any runs of five) are stored with their signatures through `Store.insert_article`. Then
half the probes are stored articles with one 20-word line replaced (an update, a wire copy with
an editor's note), half are new articles; each is looked up with `Store.find_similar`, as an add
does. Printed: the time to sign an article and to look one up (median, 99th percentile), how
many updates were found and how many new articles were wrongly matched, and the database's size.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from index.ingest.near_duplicates import fingerprint
from index.records import Document
from index.storage.data_folder import DataFolder
from index.storage.sqlite_store import Store


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=10_000)
    parser.add_argument("--probes", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    vocabulary = [f"w{i}" for i in range(5_000)]

    def article() -> list[str]:
        words = rng.choice(vocabulary, 300)
        return [" ".join(words[i : i + 20]) for i in range(0, 300, 20)]

    with tempfile.TemporaryDirectory() as folder:
        store = Store(DataFolder(Path(folder)).store)
        store.set_collection_model("bench", "none", 4)
        stored = []
        signing = []
        for n in range(args.articles):
            paragraphs = article()
            started = time.perf_counter()
            signed = fingerprint(paragraphs)
            signing.append(time.perf_counter() - started)
            doc = Document(f"Article {n}", paragraphs, source="bench")
            passages = [(i + 1, 0, p) for i, p in enumerate(paragraphs)]
            vectors = np.zeros((len(passages), 4), dtype=np.float32)
            store.insert_article("bench", doc, str(n), passages, vectors, None, fingerprint=signed)
            if n < args.probes // 2:
                stored.append(paragraphs)
        probes = [(p[:7] + [" ".join(rng.choice(vocabulary, 20))] + p[8:], True) for p in stored]
        probes += [(article(), False) for _ in range(args.probes - len(stored))]
        found = wrong = 0
        lookups = []
        for paragraphs, is_update in probes:
            signed = fingerprint(paragraphs)
            started = time.perf_counter()
            match = store.find_similar("bench", signed)
            lookups.append(time.perf_counter() - started)
            found += bool(match) and is_update
            wrong += bool(match) and not is_update
        store.close()
        size = sum(f.stat().st_size for f in Path(folder).iterdir())

    def ms(values: list[float], q: float) -> float:
        return 1000 * float(np.quantile(values, q))

    print(f"articles: {args.articles:,}, database {size / 1e6:.1f} MB")
    print(f"signing: median {ms(signing, 0.5):.2f} ms, p99 {ms(signing, 0.99):.2f} ms")
    print(f"lookup: median {ms(lookups, 0.5):.2f} ms, p99 {ms(lookups, 0.99):.2f} ms")
    fresh = len(probes) - len(stored)
    print(f"updates found: {found}/{len(stored)}; new articles matched: {wrong}/{fresh}")


if __name__ == "__main__":
    main()
