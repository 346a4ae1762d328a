"""Keyword search of text written without spaces: analysis.py's pairs of characters against a
dictionary segmenter (jieba, Chinese), on a SQuAD-format file in that language.

    .venv/bin/pip install jieba   # not a dependency: measured here, not shipped
    .venv/bin/python -m index.ops.bench.segmenters ../shared/eval/xquad.zh.json

For each way of cutting the text it prints keyword-only R@1 and R@5 of the paragraph that
answers (BM25 with bm25s's defaults, k1 1.5, b 0.75, over every paragraph of the file), the
characters a second it cuts, and, for the segmenter, its load time and memory.
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Callable

import numpy as np

from index.ingest.analysis import analyzer
from index.ops.eval_data import load_squad

Cut = Callable[[str], list[str]]
_WORDLIKE = re.compile(r"\w")


def keyword_recall(paragraphs: list[str], questions: list[tuple[str, int]], cut: Cut) -> str:
    started = time.perf_counter()
    docs = [cut(p) for p in paragraphs]
    seconds = time.perf_counter() - started
    average = sum(map(len, docs)) / len(docs)
    frequency = Counter(t for d in docs for t in set(d))
    counts = [Counter(d) for d in docs]
    lengths = np.array([len(d) for d in docs], dtype=np.float64)
    ranks = []
    for question, gold in questions:
        score = np.zeros(len(docs))
        for term in set(cut(question)):
            if term not in frequency:
                continue
            idf = math.log(1 + (len(docs) - frequency[term] + 0.5) / (frequency[term] + 0.5))
            tf = np.array([c.get(term, 0) for c in counts], dtype=np.float64)
            score += idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * lengths / average))
        ranks.append(int((score > score[gold]).sum()))
    r1 = sum(r < 1 for r in ranks) / len(ranks)
    r5 = sum(r < 5 for r in ranks) / len(ranks)
    rate = sum(map(len, paragraphs)) / seconds / 1e6
    return f"keyword-only R@1 {r1:.3f}, R@5 {r5:.3f}; {rate:.2f} M characters a second"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="a SQuAD-format file in Chinese (XQuAD's xquad.zh.json)")
    parser.add_argument("--language", default="zh")
    args = parser.parse_args(argv)
    data = load_squad(args.file)
    paragraphs: list[str] = []
    first: list[int] = []
    for article in data.articles:
        first.append(len(paragraphs))
        paragraphs += article.paragraphs
    questions = [(q.question, first[q.article] + q.paragraph - 1) for q in data.questions]
    print(f"{len(paragraphs)} paragraphs, {len(questions)} questions")
    pairs = keyword_recall(paragraphs, questions, analyzer(args.language))
    print("pairs of characters (analysis.py):", pairs)
    try:
        import jieba
    except ImportError:
        sys.exit("jieba is not installed: .venv/bin/pip install jieba")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    jieba.setLogLevel(60)
    jieba.initialize()
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    print(f"jieba: loaded in {time.perf_counter() - started:.2f} s, {grown:.0f} MB more")

    def normal(text: str) -> str:
        return unicodedata.normalize("NFKC", text).casefold()

    for mode, segment in (("accurate", jieba.lcut), ("search", jieba.lcut_for_search)):

        def cut(text: str, segment: Callable[[str], list[str]] = segment) -> list[str]:
            return [w for w in segment(normal(text)) if _WORDLIKE.search(w)]

        print(f"jieba, {mode} mode:", keyword_recall(paragraphs, questions, cut))


if __name__ == "__main__":
    main()
