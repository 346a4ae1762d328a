"""Make e5's unrelated passages and fit how far above them an answer must stand (calibration.py's
`UnrelatedPassages`), from ../shared/train only.

A collection of one or two articles has no statistics of its own: nothing tells a question's
best passage that answers it from the best of a few passages on other subjects. What does is
text that cannot hold the answer: a question about the article finds one of its passages
closer than any paragraph on other subjects, while a question about nothing the articles say
(a recipe's flour, last night's match) finds a paragraph on its own subject closer than
anything in them. The passages are SQuAD v1.1 training paragraphs (Wikipedia, CC BY-SA 4.0) and
pieces of them, a few from each of the articles of one part of the file, embedded as passages
with the running export and kept as float16 vectors with their length in the model's tokens
(the texts are not shipped, only their vectors).

Length matters: e5 puts a short passage closer to a short question than a long one on the same
subject, so a one-sentence paragraph of a news story stood above Wikipedia's long paragraphs
for any question near its subject (the weather, near a library's opening hours). Each
passage is held against those of about its own length (within `BAND` times its tokens): whole
paragraphs (`PER_ARTICLE` an article) and runs of one to three of their sentences (`PIECES`
an article), the length of a news paragraph.

The threshold is fitted on the other articles of the file, which the passages never came from:
collections of 1, 2 and 5 of them, and their questions asked of collections that hold their
article (to answer) and of ones that do not (to decline). For each, how far the best passage's
cosine with the question stands above the mean of its cosines with the `NEAREST` closest
unrelated passages of its length; the threshold is the lead below which `1 - ANSWER_TARGET` of
the first kind fall. `NEAREST` was chosen on these figures (whole paragraphs only, before the
pieces): at the same share answered (0.97), declined at sizes 1 / 2 / 5 with the nearest 1, 5,
20, 50: 0.957 / 0.942 / 0.846, 0.969 / 0.964 / 0.893, 0.979 / 0.969 / 0.921, 0.981 / 0.972 /
0.917. The pieces and the band were chosen on XQuAD's fit and choose parts and the questions of
the calibration's comment, which say why.

    python -m tools.unrelated_passages [--out FILE] [--data-dir DIR]

It prints the figures it fitted on and writes the vectors, their lengths and the threshold (by
default the file its calibration names, beside the model card). The questions are English. A
question in another language than the articles' meets its passage and the unrelated ones alike
at closer cosines and needs less: the calibration's `foreign_allowance`, chosen on XQuAD's
choose part and measured on the rest (tools/bench/small_collections.py,
tools/bench/small_server.py).
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
from index.embedding.calibration import nearest_of_length
from index.embedding.registry import MULTILINGUAL_E5_SMALL
from index.text.sentences import split_sentences

__all__ = ["main", "split_articles"]

TRAIN = Path(__file__).resolve().parents[1].parent / "shared" / "train" / "squad-v1.1-train.json"
OUT = (
    Path(__file__).resolve().parents[1]
    / "index"
    / "embedding"
    / "multilingual-e5-small-unrelated.npz"
)
PER_ARTICLE = 10  # paragraphs from each article of the passages' part
PIECES = 20  # runs of one to three sentences from each of them
BAND = 1.5  # a passage is held against those within this factor of its length in tokens
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


def pieces(paragraphs: list[str], rng: random.Random) -> list[str]:
    """The paragraphs cut into runs of one, two or three sentences, as a news story's paragraphs
    run."""
    runs: list[str] = []
    for paragraph in paragraphs:
        sentences = split_sentences(paragraph, "en")
        start = 0
        while start < len(sentences):
            size = rng.choice((1, 2, 3))
            runs.append(" ".join(sentences[start : start + size]))
            start += size
    return runs


def fit_threshold(
    embedder: Embedder, articles: list[TrainArticle], unrelated: np.ndarray, lengths: np.ndarray
) -> tuple[float, dict[str, dict[str, float]]]:
    """The threshold, and the figures it was fitted on."""
    rng = random.Random(SEED)
    passages = [_unit(embedder.encode_documents(a.paragraphs)) for a in articles]
    tokens = [np.array(embedder.token_counts(a.paragraphs)) for a in articles]
    asked: list[tuple[int, str]] = []
    for i, a in enumerate(articles):
        asked += [(i, q) for q in rng.sample(a.questions, min(len(a.questions), 8))]
    queries = _unit(embedder.encode_queries([q for _, q in asked]))
    against = queries @ unrelated.T
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
            counts = np.concatenate([tokens[i] for i in inside])
            for kind, source in (("present", rng.choice(inside)), ("absent", outside)):
                rows = rng.sample(
                    by_article[source], min(QUESTIONS_PER_COLLECTION, len(by_article[source]))
                )
                cosines = queries[rows] @ stacked.T
                for n, (row, best) in enumerate(zip(rows, cosines.argmax(axis=1), strict=True)):
                    length = int(counts[best])
                    near = nearest_of_length(against[row], lengths, length, NEAREST, BAND)
                    (present if kind == "present" else absent)[size].append(cosines[n, best] - near)
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
        runs = pieces(paragraphs, rng)
        texts += rng.sample(runs, min(PIECES, len(runs)))
    print(f"{len(texts)} unrelated passages from {len(source)} articles")
    unrelated = _unit(embedder.encode_documents(texts))
    lengths = np.array(embedder.token_counts(texts), dtype=np.int32)
    threshold, figures = fit_threshold(embedder, [articles[i] for i in held], unrelated, lengths)
    for name, row in figures.items():
        print(
            f"  {name}: answered {row['answered']:.3f}, declined {row['declined']:.3f}"
            f" ({row['questions']} questions)"
        )
    print(
        f"threshold {threshold:.4f} above the nearest {NEAREST} unrelated passages' cosine"
        f" (of those within {BAND} times the best passage's length)"
    )
    np.savez_compressed(
        args.out,
        vectors=unrelated.astype(np.float16),
        lengths=lengths,
        threshold=np.float32(threshold),
        nearest=np.int32(NEAREST),
        band=np.float32(BAND),
        model=np.str_(MULTILINGUAL_E5_SMALL.id),
        export=np.str_(str(getattr(embedder, "folder", "")).rsplit("/", 1)[-1]),
        figures=np.str_(json.dumps(figures)),
    )
    print(f"{len(texts)} passages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
