"""Declines and answers on a small Discord server whose members ask in their own language.

Two collections, as a new server has: "one", the bundled demo article alone
(index/demo/tool-library.md), and "two", the demo article with a real news story
(../shared/samples/000_bcf5d6bb99a2ac0a.txt; without ../shared, "one" alone is measured). Each
is asked the questions of small_server_questions.json, in English and 18 other languages (de fr
es pt it nl pl ru uk tr ar he hi ja ko zh vi id), through `Collection.ask`:

- "about": 4 questions a language that the demo article answers, each with the string its
  answer holds ("412"). Answered: not declined, and the first citation's quote holds the string
  (case aside, and digits compared without thousands separators: "18,000" is "18000"); a
  "wrong quote" is one not declined whose quote lacks it.
- "never": 6 questions a language that neither article mentions (a recipe's flour, last night's
  football, Australia's capital, ...). Declined: the bot abstained.

These phrasings were written for this benchmark, by hand; they are not the checks the project
is judged by. One model is loaded for both collections.

    python -m tools.bench.small_server [--json OUT] [--show-failures]

Printed: a row a language (answered of 4 and declined of 6, in each collection), then the 18
other languages pooled and English alone, with the wrong quotes, and the run time.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import index
from index import Library
from index.collection import Collection
from index.ingest.readers import read_path

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "small_server_questions.json"
DEMO = Path(index.__file__).resolve().parent / "demo" / "tool-library.md"
NEWS = HERE.parents[2] / "shared" / "samples" / "000_bcf5d6bb99a2ac0a.txt"
# A thousands separator: between digits, three digits (and no more) after it.
SEPARATOR = re.compile(r"(?<=\d)[,.'\u00a0\u202f ](?=\d{3}(?!\d))")


@dataclass
class Tally:
    answered: int = 0
    about: int = 0
    wrong_quote: int = 0
    declined: int = 0
    never: int = 0

    def add(self, other: Tally) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)

    def figures(self) -> dict[str, float | int]:
        return {
            **asdict(self),
            "answered_share": self.answered / self.about if self.about else 0.0,
            "declined_share": self.declined / self.never if self.never else 0.0,
        }


def comparable(text: str) -> str:
    return SEPARATOR.sub("", text).casefold()


def measure(
    collection: Collection, data: dict[str, Any], languages: list[str], failures: list[str]
) -> dict[str, Tally]:
    """Each language's tally; each failing question is told in `failures`."""
    tallies = {language: Tally() for language in languages}
    for language, tally in tallies.items():
        for item in data["about"]:
            question = item["questions"][language]
            answer = collection.ask(question)
            tally.about += 1
            quote = answer.citations[0].quote if answer.citations else ""
            if answer.abstained:
                failures.append(f"  {language} about, declined: {question}")
            elif comparable(item["answer"]) in comparable(quote):
                tally.answered += 1
            else:
                tally.wrong_quote += 1
                failures.append(
                    f"  {language} about, wrong quote (wants {item['answer']!r}): {question}\n"
                    f"      quoted: {quote!r}"
                )
        for row in data["never"]:
            question = row[language]
            answer = collection.ask(question)
            tally.never += 1
            if answer.abstained:
                tally.declined += 1
            else:
                cited = answer.citations[0] if answer.citations else None
                where = f"{cited.title!r} ¶{cited.paragraph}: {cited.quote!r}" if cited else "-"
                failures.append(f"  {language} never, answered: {question}\n      quoted {where}")
    return tallies


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", type=Path, help="write every figure here")
    parser.add_argument("--show-failures", action="store_true")
    args = parser.parse_args()
    data = json.loads(QUESTIONS.read_text(encoding="utf-8"))
    languages = list(data["never"][0])
    articles = {"one": [DEMO], "two": [DEMO, NEWS]}
    if not NEWS.exists():
        print(f"{NEWS} is missing: collection 'two' is not measured")
        del articles["two"]
    started = time.perf_counter()
    results: dict[str, dict[str, Tally]] = {}
    failures: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        model = Library(Path(tmp) / "warm").embedder  # loaded once for both collections
        for name, paths in articles.items():
            library = Library(Path(tmp) / name, embedder=model)
            collection = library.collection()
            for path in paths:
                collection.add(read_path(path))
            failures[name] = []
            results[name] = measure(collection, data, languages, failures[name])
            library.close()
    seconds = time.perf_counter() - started

    header = "".join(f"{f'{n} answered':>14}{f'{n} declined':>14}" for n in results)
    print(f"{'language':<10}{header}")
    for language in languages:
        cells = "".join(
            f"{f'{t.answered}/{t.about}':>14}{f'{t.declined}/{t.never}':>14}"
            for t in (results[n][language] for n in results)
        )
        print(f"{language:<10}{cells}")
    summary: dict[str, dict[str, object]] = {}
    for name, tallies in results.items():
        pooled = Tally()
        for language in languages:
            if language != "en":
                pooled.add(tallies[language])
        summary[name] = {
            "languages": {lang: t.figures() for lang, t in tallies.items()},
            "pooled_non_english": pooled.figures(),
            "english": tallies["en"].figures(),
        }
        for label, tally in (
            (f"{len(languages) - 1} languages pooled", pooled),
            ("English", tallies["en"]),
        ):
            print(
                f"{name}, {label}: answered {tally.answered}/{tally.about} "
                f"({tally.answered / tally.about:.3f}), declined {tally.declined}/{tally.never} "
                f"({tally.declined / tally.never:.3f}), wrong quotes {tally.wrong_quote}"
            )
    asks = len(results) * len(languages) * (len(data["about"]) + len(data["never"]))
    print(f"run time {seconds:.1f} s: the model's load, the adds and {asks} questions")
    if args.show_failures:
        for name, lines in failures.items():
            print(f"\nfailures in '{name}' ({len(lines)}):")
            print("\n".join(lines))
    if args.json:
        figures = {"collections": summary, "seconds": round(seconds, 2)}
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
