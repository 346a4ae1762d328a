"""`python -m tools.bench.summary_cost`: what a summary costs.

1. Adding an article of `--paragraphs` paragraphs (news-like sentences, made up here) to a new
   data folder, with its summary chosen as always, and with the choice left out (the keeper's
   `for_new` giving none), in the same process with the same loaded model, each `--runs`
   times in turn; the median of each, and how much more the summary costs.
2. A warm summary: `Collection.summary_answer` (what /summary shows) on a stored article,
   `--asks` times: p50 and p95 in milliseconds, read from storage with no model call.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from index import Library
from index.settings import Settings
from index.summaries.keeper import SummaryKeeper

WORDS = (
    "council harbour budget residents library station mayor plan works river market street "
    "school bridge museum park vote report project money week year city town"
).split()


def article(paragraphs: int, seed: int = 0) -> str:
    rng = random.Random(seed)

    def sentence() -> str:
        words = [rng.choice(WORDS) for _ in range(rng.randint(8, 20))]
        return " ".join(words).capitalize() + "."

    body = "\n\n".join(" ".join(sentence() for _ in range(2)) for _ in range(paragraphs))
    return f"A long report on the town\n\n{body}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paragraphs", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--asks", type=int, default=200)
    args = parser.parse_args()
    text = article(args.paragraphs)
    settings = Settings.from_env()
    with tempfile.TemporaryDirectory() as tmp:
        model = settings.library(Path(tmp) / "warm").embedder  # loaded once for all runs
        seconds: dict[str, list[float]] = {"with": [], "without": []}
        choosing: list[float] = []
        choose = SummaryKeeper.for_new

        def timed(keeper: SummaryKeeper, *a: object, **kw: object) -> object:
            started = time.perf_counter()
            try:
                return choose(keeper, *a, **kw)  # type: ignore[arg-type]
            finally:
                choosing.append(time.perf_counter() - started)

        for run in range(args.runs):
            # In turn, each first every other run: a process's first adds run slower.
            for kind in ("with", "without") if run % 2 == 0 else ("without", "with"):
                # The loaded model: the runs time the add alone.
                library = Library(Path(tmp) / f"{kind}-{run}", embedder=model)
                collection = library.collection()
                patch = (
                    mock.patch.object(SummaryKeeper, "for_new", return_value=None)
                    if kind == "without"
                    else mock.patch.object(SummaryKeeper, "for_new", timed)
                )
                with patch:
                    started = time.perf_counter()
                    collection.add_text(text)
                    seconds[kind].append(time.perf_counter() - started)
                library.close()
        with_s, without_s = (statistics.median(seconds[k]) for k in ("with", "without"))
        print(
            f"add of {args.paragraphs:,} paragraphs, median of {args.runs}: with its summary "
            f"{with_s:.2f} s, without {without_s:.2f} s ({100 * (with_s / without_s - 1):+.1f}%); "
            f"the choice itself {1000 * statistics.median(choosing):.1f} ms an add"
        )
        library = Library(Path(tmp) / "with-0", embedder=model)
        collection = library.collection()
        (stored,) = collection.articles()
        collection.summary_answer(stored.id)  # the first read opens the store's pages
        took = []
        for _ in range(args.asks):
            started = time.perf_counter()
            collection.summary_answer(stored.id)
            took.append(1000 * (time.perf_counter() - started))
        took.sort()
        p95 = took[int(0.95 * (len(took) - 1))]
        print(
            f"summary_answer of a stored article ({args.asks} asks): "
            f"p50 {statistics.median(took):.2f} ms, p95 {p95:.2f} ms"
        )
        library.close()


if __name__ == "__main__":
    main()
