"""Make e5's unrelated passages and fit how far above them an answer must stand (calibration.py's
`UnrelatedPassages`), from ../shared/train only.

A collection of one or two articles has no statistics of its own: nothing tells a question's
best passage that answers it from the best of a few passages on other subjects. What does is
text that cannot hold the answer: a question about the article finds one of its passages
closer than any paragraph on other subjects, while a question about nothing the articles say
(a recipe's flour, last night's match) finds a paragraph on its own subject closer than
anything in them. The passages are SQuAD v1.1 training paragraphs (Wikipedia, CC BY-SA 4.0), a
few from each of the articles of one part of the file, embedded as passages with the running
export and kept as float16 vectors (the texts are not shipped, only their vectors).

The threshold is fitted on the other articles of the file, which the passages never came from:
collections of 1, 2 and 5 of them, and their questions asked of collections that hold their
article (to answer) and of ones that do not (to decline). For each, how far the best passage's
cosine with the question stands above the mean of its cosines with the `NEAREST` closest
unrelated passages; the threshold is the lead below which `1 - ANSWER_TARGET` of the first kind
fall. `NEAREST` was chosen on these figures: at the same share answered (0.97), declined at
sizes 1 / 2 / 5 with the nearest 1, 5, 20, 50: 0.957 / 0.942 / 0.846, 0.969 / 0.964 / 0.893,
0.979 / 0.969 / 0.921, 0.981 / 0.972 / 0.917; in standard deviations above all of them, the
measure of before, 0.976 / 0.964 / 0.900.

    python -m tools.unrelated_passages [--out FILE] [--data-dir DIR]

It prints the figures it fitted on and writes the vectors and the threshold (by default the file
its calibration names, beside the model card). The questions are English. A question in another
language than the articles' meets its passage and the unrelated ones alike at closer cosines
and needs less: the calibration's `foreign_allowance`, chosen on XQuAD's choose part and
measured on the rest (tools/bench/small_collections.py, tools/bench/small_server.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from index.embedding.base import Embedder
from index.embedding.registry import MULTILINGUAL_E5_SMALL

__all__ = ["main", "split_articles"]

TRAIN = Path(__file__).resolve().parents[1].parent / "shared" / "train" / "squad-v1.1-train.json"
OUT = (
    Path(__file__).resolve().parents[1]
    / "index"
    / "embedding"
    / "multilingual-e5-small-unrelated.npz"
)
PER_ARTICLE = 10  # paragraphs from each article of the passages' part
PASSAGES_SHARE = 2 / 3  # of the file's articles, by a seeded hash of their titles
SIZES = (1, 2, 5)
COLLECTIONS_PER_SIZE = 120
QUESTIONS_PER_COLLECTION = 6
ANSWER_TARGET = 0.97
NEAREST = 20
SEED = 0


def split_articles(titles: list[str]) -> tuple[list[int], list[int]]:
    """The positions of the articles the passages come from, and of those the threshold is fitted
    on, by a seeded hash of their titles."""
    ranked = sorted(
        range(len(titles)), key=lambda i: hashlib.sha256(f"{SEED}\n{titles[i]}".encode()).digest()
    )
    cut = round(PASSAGES_SHARE * len(ranked))
    return sorted(ranked[:cut]), sorted(ranked[cut:])


@dataclass(frozen=True)
class TrainArticle:
    title: str
    paragraphs: list[str]
    questions: list[str]


def _load(path: Path) -> list[TrainArticle]:
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    return [
        TrainArticle(
            item["title"],
            [p["context"] for p in item["paragraphs"]],
            [qa["question"] for p in item["paragraphs"] for qa in p["qas"]],
        )
        for item in data
    ]


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def fit_threshold(
    embedder: Embedder, articles: list[TrainArticle], unrelated: np.ndarray
) -> tuple[float, dict[str, dict[str, float]]]:
    """The threshold, and the figures it was fitted on."""
    rng = random.Random(SEED)
    passages = [_unit(embedder.encode_documents(a.paragraphs)) for a in articles]
    asked: list[tuple[int, str]] = []
    for i, a in enumerate(articles):
        asked += [(i, q) for q in rng.sample(a.questions, min(len(a.questions), 8))]
    queries = _unit(embedder.encode_queries([q for _, q in asked]))
    against = queries @ unrelated.T
    nearest = np.sort(against, axis=1)[:, -NEAREST:].mean(axis=1)
    by_article: dict[int, list[int]] = {}
    for row, (i, _) in enumerate(asked):
        by_article.setdefault(i, []).append(row)
    present: dict[int, list[float]] = {k: [] for k in SIZES}
    absent: dict[int, list[float]] = {k: [] for k in SIZES}
    for size in SIZES:
        for _ in range(COLLECTIONS_PER_SIZE):
            inside = rng.sample(range(len(articles)), size)
            outside = rng.choice([i for i in range(len(articles)) if i not in inside])
            stacked = np.concatenate([passages[i] for i in inside])
            for kind, source in (("present", rng.choice(inside)), ("absent", outside)):
                rows = rng.sample(
                    by_article[source], min(QUESTIONS_PER_COLLECTION, len(by_article[source]))
                )
                best = (queries[rows] @ stacked.T).max(axis=1)
                lead = best - nearest[rows]
                (present if kind == "present" else absent)[size] += list(lead)
    answered = np.concatenate([present[k] for k in SIZES])
    threshold = float(np.quantile(answered, 1 - ANSWER_TARGET))
    figures = {
        f"size {k}": {
            "answered": round(float(np.mean(np.array(present[k]) >= threshold)), 3),
            "declined": round(float(np.mean(np.array(absent[k]) < threshold)), 3),
            "questions": len(present[k]) + len(absent[k]),
        }
        for k in SIZES
    }
    return threshold, figures


def main(argv: list[str] | None = None) -> int:
    from index.embedding.embedder import load_embedder
    from index.settings import Settings

    parser = argparse.ArgumentParser(
        prog="python -m tools.unrelated_passages", description=(__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--train", type=Path, default=TRAIN, help="SQuAD v1.1 training file")
    parser.add_argument("--out", type=Path, default=OUT, help="the table to write")
    parser.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    args = parser.parse_args(argv)
    data_dir = args.data_dir or Settings.from_env().data_dir
    embedder = load_embedder(MULTILINGUAL_E5_SMALL.id, "onnx", data_dir / "models")
    articles = _load(args.train)
    source, held = split_articles([a.title for a in articles])
    rng = random.Random(SEED)
    texts: list[str] = []
    for i in source:
        paragraphs = articles[i].paragraphs
        texts += rng.sample(paragraphs, min(PER_ARTICLE, len(paragraphs)))
    print(f"{len(texts)} unrelated passages from {len(source)} articles")
    unrelated = _unit(embedder.encode_documents(texts))
    threshold, figures = fit_threshold(embedder, [articles[i] for i in held], unrelated)
    for name, row in figures.items():
        print(
            f"  {name}: answered {row['answered']:.3f}, declined {row['declined']:.3f}"
            f" ({row['questions']} questions)"
        )
    print(f"threshold {threshold:.4f} above the nearest {NEAREST} unrelated passages' cosine")
    np.savez_compressed(
        args.out,
        vectors=unrelated.astype(np.float16),
        threshold=np.float32(threshold),
        nearest=np.int32(NEAREST),
        model=np.str_(MULTILINGUAL_E5_SMALL.id),
        export=np.str_(str(getattr(embedder, "folder", "")).rsplit("/", 1)[-1]),
        figures=np.str_(json.dumps(figures)),
    )
    print(f"{len(texts)} passages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
