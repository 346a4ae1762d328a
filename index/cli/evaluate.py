"""`articlebot eval`: answer quality on a SQuAD-format file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from index.cli.arguments import Subcommands, count
from index.cli.inputs import open_text
from index.cli.output import print_json, progress_bar
from index.errors import BadInput
from index.library import Library
from index.ops.eval_split import PARTS


def cmd_eval(args: argparse.Namespace, library: Library) -> int:
    import index.ops.evaluate as ev

    dataset = ev.load_squad(args.file)
    if args.questions_from:
        dataset = dataset.asked_as(ev.load_squad(args.questions_from))
    if args.articles:
        if args.part:
            # The parts are drawn from the whole file's halves; a span has other halves, and its
            # articles would be drawn into other parts than the file's.
            raise BadInput("Choose --articles or --part; a part is drawn from the whole file.")
        start, stop = args.articles
        dataset = dataset.subset(range(len(dataset.articles))[start:stop])
    if args.leave_one_out and (args.write_batch or args.answers):
        raise BadInput(
            "--leave-one-out asks each question of all articles but its own, in this process; "
            "run it without --write-batch or --answers."
        )
    the_plan = ev.plan(
        dataset,
        abstention=args.abstention,
        leave_one_out=args.leave_one_out,
        questions=args.questions,
        seed=args.seed,
        part=args.part,
    )
    name = args.collection or ev.default_collection(args.file, args.articles, args.abstention)
    collection = library.collection(name)
    with progress_bar(not args.json) as progress:
        ids = ev.build(collection, the_plan.indexed, progress)
        if args.write_batch:
            with open(args.write_batch, "w", encoding="utf-8") as out:
                out.writelines(line + "\n" for line in ev.batch_lines(name, the_plan.questions))
            print(
                f"Wrote {len(the_plan.questions):,} questions for collection {name!r}.",
                file=sys.stderr,
            )
            return 0
        if args.answers:
            with open_text(args.answers) as lines:
                answers = [ev.Scored.from_json(json.loads(x)) for x in lines if x.strip()]
        else:
            answers = ev.ask_all(
                collection, the_plan.questions, progress=progress, scopes=the_plan.scopes(ids)
            )
    report = ev.score(collection, the_plan, ids, answers, file=args.file)
    if args.json:
        print_json(report.to_json())
    else:
        print("\n".join(f"{k}: {v}" for k, v in report.to_json().items()))
    return 0


def _span(value: str) -> tuple[int, int | None]:
    """Articles by position, as Python slices them: "0:24", "24:", or one article "5"."""
    start, colon, stop = value.partition(":")
    try:
        first = int(start or 0)
        if not colon:
            return first, first + 1
        return first, int(stop) if stop else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a span like 0:24 or 24:") from None


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("eval", help="measure answer quality on a SQuAD-format file")
    p.add_argument("file", metavar="FILE", help="a SQuAD v1.1 or v2.0 JSON file")
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument(
        "--collection", help="collection to index into (default: eval-FILE, one per span and mode)"
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.add_argument("--questions", type=count, help="ask this many questions, drawn with --seed")
    p.add_argument("--seed", type=int, default=0, help="seed of the question draw (default: 0)")
    p.add_argument(
        "--articles", type=_span, help="only these articles, by position: 0:24, 24: or 5"
    )
    p.add_argument(
        "--abstention",
        action="store_true",
        help="index the first half of the articles; ask about both halves",
    )
    p.add_argument(
        "--leave-one-out",
        action="store_true",
        help="index every article; ask each question as it is and again without its article",
    )
    p.add_argument(
        "--part",
        choices=PARTS,
        help="ask only about the articles of this part: report is what nothing was fitted on",
    )
    p.add_argument(
        "--questions-from",
        metavar="FILE",
        help="ask each question as worded in this file (same ids, e.g. XQuAD in another language)",
    )
    p.add_argument(
        "--write-batch", metavar="OUT", help="write the questions as `ask --batch` input and stop"
    )
    p.add_argument(
        "--answers", metavar="JSONL", help="score this `ask --batch --json` output; ask nothing"
    )
    p.set_defaults(func=cmd_eval)
