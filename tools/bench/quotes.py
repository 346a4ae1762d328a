"""Which sentences an answer quotes: the quote rules (answers/quote_choice.py) on a grid, set on
the questions about each file's fit and choose articles (`index/ops/eval_split.py`). The
questions about its report articles are not asked here: a rule is set without a figure of them
in view, and the rules set are measured on them afterwards with `articlebot eval --part report`.

Each file is pooled in one collection as `articlebot eval` pools it (built if missing); each
question is retrieved once, and its answer composed under every variant of the rules. For each
variant: a gold answer in the answer's text (NFKC, case folded) on the questions it is set on,
and the median answer's length.

    python -m tools.bench.quotes ../shared/eval/xquad.ar.json@data/ar ... [--grid NAME]
        [--questions N]

The weights that read each sentence are not fitted here but on the training data
(`python -m tools.fit_quotes`); these rules turn their chances into a quote.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import os
import statistics
import sys
from pathlib import Path

from index.answers.compose import compose
from index.answers.quote_choice import RULES, QuoteRules
from index.library import Library
from index.ops import evaluate as ev
from index.ops.eval_split import parts
from index.records import Article
from index.search.retrieval import Retrieved
from index.settings import model_cache

# The variants tried: each name's values, the rest as RULES has them.
GRIDS: dict[str, dict[str, list[float]]] = {
    "length": {"length_cost": [0.03, 0.04, 0.045, 0.05, 0.06, 0.08]},
    "least": {"least_quote": [0, 80, 120, 150]},
    "budget": {"budget": [300, 360, 440, 520]},
    "across": {"length_cost_across": [0.05, 0.08, 0.12, 0.16, 0.24]},
    "sharp": {"across_sharpness": [2, 4, 8, 16], "length_cost_across": [0.05, 0.08]},
    "alone": {"alone": [1, 2, 3, 5], "alone_across": [2, 3, 5]},
}


def _variants(grid: dict[str, list[float]]) -> list[QuoteRules]:
    names = list(grid)
    out = []
    for values in itertools.product(*(grid[n] for n in names)):
        rules = RULES
        for name, value in zip(names, values, strict=True):
            kind = type(getattr(RULES, name))
            rules = dataclasses.replace(rules, **{name: kind(value)})
        out.append(rules)
    return out


Asked = tuple[str, Retrieved, dict[int, Article], ev.EvalQuestion]


def _retrieved(spec: str, questions: int | None = None) -> list[Asked]:
    file, _, data_dir = spec.partition("@")
    dataset = ev.load_squad(file)
    library = Library(Path(data_dir or "data"), model_cache=model_cache(os.environ))
    collection = library.collection(ev.default_collection(file, None, False))
    ev.build(collection, dataset, None)
    part = parts([a.title for a in dataset.articles])
    out = []
    for q in ev.plan(dataset, questions=questions).answer:
        if part[q.article] == "report":
            continue
        question = " ".join(q.question.split())
        found = collection.retriever.retrieve(question, 5)
        cited = {found.passages[h.passage_id].article_id for h in found.hits}
        articles = {aid: collection.get(aid) for aid in cited}
        out.append((question, found, articles, q))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", metavar="FILE[@DATA_DIR]")
    parser.add_argument("--grid", choices=sorted(GRIDS), default="length")
    parser.add_argument(
        "--questions", type=int, help="ask this many of each file, drawn as `articlebot eval` draws"
    )
    args = parser.parse_args(argv)
    asked = {spec: _retrieved(spec, args.questions) for spec in args.files}
    print("variant", *(Path(s.partition("@")[0]).stem for s in args.files), sep="\t")
    for rules in _variants(GRIDS[args.grid]):
        cells = []
        for spec in args.files:
            held, lengths = [], []
            for question, found, articles, q in asked[spec]:
                answer = compose(question, found, articles, rules)
                held.append(not answer.abstained and ev.holds(answer.answer, q.answers))
                if not answer.abstained:
                    lengths.append(len(answer.answer))
            share = sum(held) / max(1, len(held))
            median = statistics.median(lengths) if lengths else 0
            cells.append(f"{share:.3f}/{median:.0f}")
        changed = {
            f.name: getattr(rules, f.name)
            for f in dataclasses.fields(QuoteRules)
            if getattr(rules, f.name) != getattr(RULES, f.name)
        }
        print(changed or "as shipped", *cells, sep="\t", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
