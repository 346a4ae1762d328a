"""How much of a page's article text `articlebot show --json` gives back, against hand-made truth.

    PYTHONPATH=. .venv/bin/python -m tools.bench.extraction_quality [--pages tests/data/pages]

Each `NAME.html` beside a `NAME.truth.txt` (the text a reader sees as the article: subheadings,
paragraphs, list items and table rows, one per line) is added with `articlebot add FILE --json`
in a fresh data folder and read back with `show ID --json`: each passage's text, preceded by its
heading where the heading changes. Both sides are cut into 4-word shingles (lower-cased words,
punctuation dropped), counted with repeats, as the public extraction benchmarks score; the
figures are per page and their mean. Plain trafilatura (its own plain-text output, tables
included) is scored the same way for comparison. Shingles do not see punctuation or breaks, so
the longest stored paragraph (in words) and the Markdown syntax left (`|`, `---`, `\\`) are
printed too: a layout table flattened into one paragraph scores as well as one read right.

The package measured is the one `python -m index` imports: point PYTHONPATH at another checkout
to measure that version.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import trafilatura

ROOT = Path(__file__).resolve().parents[2]  # the checkout


def shingles(text: str, size: int = 4) -> Counter[tuple[str, ...]]:
    words = [w.casefold() for w in re.findall(r"[^\W_]+", text)]
    return Counter(tuple(words[i : i + size]) for i in range(max(0, len(words) - size + 1)))


def scores(found: str, truth: str) -> tuple[float, float, float]:
    got, want = shingles(found), shingles(truth)
    common = sum((got & want).values())
    precision = common / max(1, sum(got.values()))
    recall = common / max(1, sum(want.values()))
    f1 = 2 * precision * recall / (precision + recall) if common else 0.0
    return precision, recall, f1


def articlebot(data_dir: Path, *argv: str) -> dict[str, object]:
    env = {**os.environ, "ARTICLEBOT_DATA_DIR": str(data_dir)}
    out = subprocess.run(
        [sys.executable, "-m", "index", *argv, "--json"],
        env=env,
        cwd=data_dir,  # not the checkout: `-m` would import the package found there first
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return dict(json.loads(out.splitlines()[0]))


def shown(data_dir: Path, page: Path) -> tuple[str, int, int]:
    """The article's text as `show --json` gives it, its longest paragraph, the syntax left."""
    added = articlebot(data_dir, "add", str(page))
    if "error" in added:
        return "", 0, 0
    article = articlebot(data_dir, "show", str(added["article_id"]))
    texts = [p["text"] for p in article["passages"]]  # type: ignore[attr-defined]
    longest = max(len(t.split()) for t in texts)
    syntax = sum(len(re.findall(r"\||-{3,}|\\", t)) for t in texts)
    lines: list[str] = []
    heading = None
    for passage in article["passages"]:  # type: ignore[attr-defined]
        if passage.get("heading") and passage["heading"] != heading:
            lines.append(passage["heading"])
        heading = passage.get("heading")
        lines.append(passage["text"])
    return "\n".join(lines), longest, syntax


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=Path, default=ROOT / "tests" / "data" / "pages")
    args = parser.parse_args()
    Scores = tuple[float, float, float]
    rows: list[tuple[str, Scores, Scores, int, int]] = []
    with tempfile.TemporaryDirectory() as folder:
        for truth_file in sorted(args.pages.glob("*.truth.txt")):
            page = truth_file.with_name(truth_file.name.replace(".truth.txt", ".html"))
            truth = truth_file.read_text()
            html = page.read_text()
            plain = trafilatura.extract(html, include_tables=True, favor_recall=True) or ""
            text, longest, syntax = shown(Path(folder), page)
            rows.append((page.stem, scores(text, truth), scores(plain, truth), longest, syntax))
    print(f"{'page':<16} {'articlebot P/R/F1':>22} {'trafilatura P/R/F1':>22}  longest  syntax")
    for name, ours, theirs, longest, syntax in rows:
        print(
            f"{name:<16} {'/'.join(f'{x:.3f}' for x in ours):>22} "
            f"{'/'.join(f'{x:.3f}' for x in theirs):>22}  {longest:>7}  {syntax:>6}"
        )
    for label, column in (
        ("articlebot", [r[1] for r in rows]),
        ("trafilatura", [r[2] for r in rows]),
    ):
        mean = [sum(s[i] for s in column) / len(column) for i in range(3)]
        print(f"mean {label}: precision {mean[0]:.3f} recall {mean[1]:.3f} F1 {mean[2]:.3f}")


if __name__ == "__main__":
    main()
