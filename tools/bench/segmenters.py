"""Keyword search of text written without spaces: analysis.py's pairs of characters against a
dictionary segmenter (jieba, Chinese), on a SQuAD-format file in that language.

    .venv/bin/pip install jieba   # not a dependency: measured here, not shipped
    .venv/bin/python -m tools.bench.segmenters ../shared/eval/xquad.zh.json

For each way of cutting the text it prints keyword-only R@1 and R@5 of the paragraph that
answers (the project's own BM25 index, `KeywordIndex`, over every paragraph of the file), the
characters a second it cuts, and, for the segmenter, its load time and memory.
"""

from __future__ import annotations

import argparse
import re
import resource
import sys
import time
import unicodedata
from collections.abc import Callable

from index.ops.eval_data import load_squad
from index.search.bm25_index import KeywordIndex
from index.text.analysis import analyzer

Cut = Callable[[str], list[str]]
_WORDLIKE = re.compile(r"\w")


def keyword_recall(paragraphs: list[str], questions: list[tuple[str, int]], cut: Cut) -> str:
    started = time.perf_counter()
    tokens = [cut(p) for p in paragraphs]
    seconds = time.perf_counter() - started
    index = KeywordIndex.from_tokens(list(range(len(paragraphs))), tokens)
    found = [index.search(cut(question), 5)[1].tolist() for question, _ in questions]
    r1 = sum(ids[:1] == [gold] for ids, (_, gold) in zip(found, questions, strict=True))
    r5 = sum(gold in ids for ids, (_, gold) in zip(found, questions, strict=True))
    rate = sum(map(len, paragraphs)) / seconds / 1e6
    n = len(questions)
    return f"keyword-only R@1 {r1 / n:.3f}, R@5 {r5 / n:.3f}; {rate:.2f} M characters a second"


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
