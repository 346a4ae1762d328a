"""Where each answer is lost: every question of an evaluation file asked as `articlebot eval`
asks it (the file's articles pooled in one collection), and sorted by where its gold answer is.

    python -m tools.bench.losses FILE --data-dir DIR [--questions N] [--questions-from F]
        [--part report|choose|fit|all]

The questions are those about the file's *report* articles (`index/ops/eval_split.py`), which
nothing was fitted on, unless `--part` says otherwise.

Each question falls in one row: the answer holds a gold answer; the first cited passage holds
one and the quote missed it; the second or third does and the quote missed it; none of the three
does; or the question was declined. For the declined, the answer is also composed as if the
judgement had found the best passage relevant, to count how many would have held a gold answer:
the most that answering them could bring. `holds` is `articlebot eval`'s `containment_in_text`
for the same questions. What the rows say of a change is where to look: the quote (the first two
rows), the ranking (the third), or the judgement (the last).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections import Counter
from collections.abc import Sequence

from index.answers.compose import compose
from index.collection import Collection
from index.library import Library
from index.ops import evaluate as ev
from index.ops.eval_split import PARTS, Part
from index.settings import model_cache
from index.text.characters import normalize

__all__ = ["ROWS", "losses", "main"]

ROWS = ("holds", "quote_missed_first", "quote_missed_second_third", "not_in_three", "declined")


def losses(
    library: Library,
    file: str,
    questions: int | None,
    questions_from: str | None,
    part: Part | None = "report",
) -> dict:
    """The share of the file's questions (those about `part`'s articles; None: every one) in
    each row of `ROWS`, and of those declined, the share of all questions whose answer would
    have held a gold answer."""
    dataset = ev.load_squad(file)
    if questions_from:
        dataset = dataset.asked_as(ev.load_squad(questions_from))
    the_plan = ev.plan(dataset, questions=questions, seed=0, part=part)
    collection = library.collection(ev.default_collection(file, None, False))
    ev.build(collection, the_plan.indexed, None)
    rows: Counter[str] = Counter()
    declined_would_hold = 0
    top_k = max(ev.RECALL_AT)  # as many passages as `eval` asks for
    for q in the_plan.answer:
        answer = collection.ask(q.question, top_k=top_k)
        cited = [c.text for c in answer.citations]
        if answer.abstained:
            rows["declined"] += 1
            declined_would_hold += ev.holds(_let_through(collection, q.question, top_k), q.answers)
        elif ev.holds(answer.answer, q.answers):
            rows["holds"] += 1
        elif cited and ev.holds(cited[0], q.answers):
            rows["quote_missed_first"] += 1
        elif any(ev.holds(text, q.answers) for text in cited[1:3]):
            rows["quote_missed_second_third"] += 1
        else:
            rows["not_in_three"] += 1
    n = max(1, len(the_plan.answer))
    return {
        "file": file,
        "part": part,
        "questions": len(the_plan.answer),
        **{row: round(rows[row] / n, 4) for row in ROWS},
        "declined_would_hold": round(declined_would_hold / n, 4),
        # The same rows as counts, which add up to the questions exactly.
        "counts": {**{row: rows[row] for row in ROWS}, "declined_would_hold": declined_would_hold},
    }


def _let_through(collection: Collection, question: str, top_k: int) -> str:
    """The answer to a declined question composed as if its best passage had been judged
    relevant: retrieved again as `Collection.ask` retrieves it (only the declined, a few in a
    hundred, are retrieved twice)."""
    question = " ".join(normalize(question).split())
    found = collection.retriever.retrieve(question, top_k, None)
    cited = {found.passages[h.passage_id].article_id for h in found.hits}
    articles = {a: collection.get(a) for a in cited}
    return compose(question, dataclasses.replace(found, relevant=True), articles).answer


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file")
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--questions", type=int, help="ask this many, drawn with seed 0")
    parser.add_argument("--questions-from", help="the same questions as worded in this file")
    parser.add_argument(
        "--part",
        choices=[*PARTS, "all"],
        default="report",
        help="the questions about this part's articles (default: report, fitted on by nothing)",
    )
    args = parser.parse_args(argv)
    library = Library(args.data_dir, model_cache=model_cache(os.environ))
    try:
        part = None if args.part == "all" else args.part
        figures = losses(library, args.file, args.questions, args.questions_from, part)
    finally:
        library.close()
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
