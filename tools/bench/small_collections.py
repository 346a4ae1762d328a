"""Declines and answers in small collections: 1, 2, 5 and 20 articles, as a new server has.

For each evaluation file and size k, the file's articles are taken in windows of 2k; in each,
the first k are indexed (a collection of their own) and questions are asked about both halves
(`articlebot eval --abstention` on the window): those about the indexed half should be
answered, those about the other declined. Windows never share an article, so at size 1 a file
of 48 articles gives 24 collections. XQuAD's files give questions in the articles' language
(`xquad.de.json`) and in another (`xquad_en-ctx_zh-q.json`: English articles, Chinese
questions).

    python -m tools.bench.small_collections [--sizes 1 2 5 20] [--questions 12] [--json OUT]
        [--without-unrelated] [--parts fit choose report] FILE...

`--without-unrelated` measures the judgement alone (no unrelated passages), the figures of
before. `--parts` keeps the articles of those parts of each file (`articlebot eval --part`):
what is chosen on the fit and choose parts is reported on the report part (the files
must be given before it). It prints, per file and size, the share answered and declined, then
each size pooled.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from index import Library
from index.embedding.calibration import UnrelatedPassages
from index.ops.eval_data import load_squad
from index.ops.eval_reports import AbstentionReport
from index.ops.eval_split import parts
from index.ops.evaluate import evaluate


def measure(
    library: Library, path: Path, size: int, questions: int, of_parts: Sequence[str]
) -> tuple[float, int, float, int]:
    """(answered, questions about indexed articles, declined, questions about the others), of
    the file's articles in `of_parts` (index/ops/eval_split.py; all when empty)."""
    dataset = load_squad(path)
    titles = [a.title for a in dataset.articles]
    kept = [i for i, part in enumerate(parts(titles)) if not of_parts or part in of_parts]
    answered = declined = asked_in = asked_out = 0.0
    for start in range(0, len(kept) - 2 * size + 1, 2 * size):
        window = dataset.subset(kept[start : start + 2 * size])
        collection = library.collection(f"{path.stem}-{size}-{start}")
        report = evaluate(
            collection,
            window,
            file=str(path),
            abstention=True,
            questions=questions * size,  # each size asks about as many questions in all
            seed=start,
        )
        assert isinstance(report, AbstentionReport)
        answered += report.answered * report.answerable_questions
        declined += report.abstained * report.unanswerable_questions
        asked_in += report.answerable_questions
        asked_out += report.unanswerable_questions
    return answered / asked_in, int(asked_in), declined / asked_out, int(asked_out)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--sizes", nargs="+", type=int, default=[1, 2, 5, 20])
    parser.add_argument(
        "--questions", type=int, default=12, help="per indexed article, and as many about others"
    )
    parser.add_argument("--without-unrelated", action="store_true")
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=["fit", "choose", "report"],
        default=[],
        help="only the articles of these parts of each file (default: all)",
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.without_unrelated:  # the judgement's margin stands alone
        mock.patch.object(UnrelatedPassages, "lead", return_value=float("inf")).start()
    rows: dict[str, dict[str, list[float]]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        model = Library(Path(tmp) / "warm").embedder
        library = Library(Path(tmp) / "data", embedder=model)
        print(f"{'file':28} {'size':>4} {'answered':>9} {'declined':>9}  questions")
        for path in args.files:
            for size in args.sizes:
                answered, n_in, declined, n_out = measure(
                    library, path, size, args.questions, args.parts
                )
                rows.setdefault(str(size), {}).setdefault("answered", []).append(answered)
                rows[str(size)].setdefault("declined", []).append(declined)
                rows[str(size)].setdefault(path.stem, []).extend([answered, declined])
                print(
                    f"{path.stem:28} {size:>4} {answered:>9.3f} {declined:>9.3f}  {n_in} + {n_out}"
                )
    print("pooled (mean of the files):")
    for size, row in rows.items():
        a, d = row["answered"], row["declined"]
        print(f"  size {size:>3}: answered {sum(a) / len(a):.3f}, declined {sum(d) / len(d):.3f}")
    print(f"{time.perf_counter() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
