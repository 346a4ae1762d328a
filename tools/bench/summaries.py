"""`python -m tools.bench.summaries`: the summaries against people's, side by side with lead-3
and a centrality baseline, in ROUGE.

Each summary set of ../shared/eval/summaries/ (news with human summaries) is added to a data
folder of its own (once: `--data-dir`, kept between runs), one collection a set, as `articlebot
add` would add it; each article's summary is then read as `articlebot summary` gives it, and
lead-3 (the first three sentences of the same stored article, as its language splits them) and
LexRank (the three sentences most central in the graph of their cosines, the same vectors) are
made from the same stored text. ROUGE-1, -2 and -L F1 (the rouge-score package, best of the
references), with a tokenizer that keeps Unicode letters and digits, so every script counts.
By default only the report part of each set (index/ops/eval_split.py, by article id) is
scored: the part no rule was set on.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import regex

from index.ops.eval_split import PARTS, parts
from index.settings import Settings
from index.summaries import RULES, ArticleText, SummaryRules, summarize
from index.summaries.stored import article_text
from index.text import UNSPACED, profile

SETS = Path("../shared/eval/summaries")
_TOKEN = regex.compile(r"[\p{L}\p{N}]+")


class _Tokenizer:
    """Words of any script, lower-cased; a character of an unspaced script is a word."""

    def tokenize(self, text: str) -> list[str]:
        out: list[str] = []
        for word in _TOKEN.findall(text.casefold()):
            out.extend(list(word) if UNSPACED.search(word) else [word])
        return out


@dataclass(frozen=True)
class Item:
    article: ArticleText
    references: list[str]
    part: str


def load_sets(data_dir: Path, names: Sequence[str] | None = None) -> dict[str, list[Item]]:
    """Every summary set, its articles added to `data_dir` (once) and read back as stored."""
    library = Settings.from_env().library(data_dir)
    out: dict[str, list[Item]] = {}
    for path in sorted(SETS.glob("*.json")):
        name = path.stem
        if names and name not in names:
            continue
        documents = json.loads(path.read_text(encoding="utf-8"))["documents"]
        collection = library.collection(name)
        split = parts([str(d["id"]) for d in documents])
        items = []
        for document, part in zip(documents, split, strict=True):
            # A set with no titles: a placeholder, which holds none of the article's words.
            title = document["title"] or f"Story {document['id']}"
            added = collection.add_text(document["text"], title=title)
            model = collection.store.collection_model(name)
            text = article_text(collection.store, name, added.article, model)
            items.append(Item(text, list(document["summaries"]), part))
        out[name] = items
    library.close()
    return out


def lead(article: ArticleText, count: int = 3) -> list[str]:
    language = profile(article.language)
    out: list[str] = []
    for _, text in article.passages:
        out.extend(language.sentences(text))
        if len(out) >= count:
            break
    return out[:count]


def lexrank(article: ArticleText, count: int = 3, reads: int = 60) -> list[str]:
    """LexRank (Erkan and Radev, 2004) over the first `reads` sentences' vectors: the
    stationary distribution of the cosine graph, damped 0.85; the `count` most central, in
    order."""
    language = profile(article.language)
    sentences: list[str] = []
    vectors: list[np.ndarray] = []
    for n, (_, text) in enumerate(article.passages):
        split = language.sentences(text)
        rows = article.sentence_rows[n] if n < len(article.sentence_rows) else None
        for i, sentence in enumerate(split):
            if rows is not None and len(rows) == len(split) and np.all(np.isfinite(rows[i])):
                vector = rows[i]
            elif article.vectors is not None:
                vector = article.vectors[n]
            else:
                continue
            sentences.append(sentence)
            vectors.append(np.asarray(vector, dtype=np.float32) / np.linalg.norm(vector))
        if len(sentences) >= reads:
            break
    if len(sentences) <= count:
        return sentences
    matrix = np.stack(vectors)
    graph = np.clip(matrix @ matrix.T, 0, None)
    graph /= graph.sum(1, keepdims=True)
    rank = np.full(len(sentences), 1 / len(sentences))
    for _ in range(50):
        rank = 0.15 / len(sentences) + 0.85 * graph.T @ rank
    best = sorted(np.argsort(-rank)[:count])
    return [sentences[i] for i in best]


def ours(rules: SummaryRules) -> Callable[[ArticleText], list[str]]:
    def run(article: ArticleText) -> list[str]:
        return [s.text for s in summarize(article, rules)]

    return run


def score(items: Sequence[Item], make: Callable[[ArticleText], list[str]]) -> dict[str, float]:
    """Mean ROUGE-1, -2 and -L F1 (best of the references), in points, and mean words."""
    from rouge_score import rouge_scorer  # a developer's tool's dependency (the dev extra)

    scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], tokenizer=_Tokenizer())
    totals: dict[str, list[float]] = {"rouge1": [], "rouge2": [], "rougeL": [], "words": []}
    for item in items:
        made = " ".join(make(item.article))
        best = {k: 0.0 for k in ("rouge1", "rouge2", "rougeL")}
        for reference in item.references:
            for key, value in scorer.score(reference, made).items():
                best[key] = max(best[key], value.fmeasure)
        for key, value in best.items():
            totals[key].append(100 * value)
        totals["words"].append(len(made.split()))
    return {k: statistics.fmean(v) if v else 0.0 for k, v in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("data/summary-sets"))
    parser.add_argument("--part", choices=[*PARTS, "all"], default="report")
    parser.add_argument("--set", action="append", help="only this set (by file name)")
    args = parser.parse_args()
    sets = load_sets(args.data_dir, args.set)
    methods: dict[str, Callable[[ArticleText], list[str]]] = {
        "lead-3": lead,
        "lexrank-3": lexrank,
        "articlebot": ours(RULES),
    }
    print(f"part: {args.part}; ROUGE F1 x100 (best of the references); words a summary")
    for name, items in sets.items():
        chosen = [i for i in items if args.part in ("all", i.part)]
        print(f"\n{name} ({len(chosen)} articles)")
        for method, make in methods.items():
            got = score(chosen, make)
            print(
                f"  {method:<11} R1 {got['rouge1']:5.1f}  R2 {got['rouge2']:5.1f}  "
                f"RL {got['rougeL']:5.1f}  words {got['words']:5.1f}"
            )


if __name__ == "__main__":
    main()
