"""Adversarial text: seconds per 100 KB of each shape of text, against ordinary prose.

    .venv/bin/python -m tools.bench.text_shapes [--size 100000] [--only NAME,...]
        [--cli NAME,...|worst|all] [--cli-size 50000] [--questions]

Each shape is a unit repeated to --size characters (`SHAPES`): runs of every script's sentence
marks with no space after them, closers, quotes, brackets, abbreviations and initials, unspaced
scripts, invisible and combining characters, Markdown and HTML-like markup. Ordinary prose is
XQuAD's paragraphs (../shared/eval) in English, Chinese, Arabic and Russian. Printed, in seconds
per 100 KB of process time (the best of --repeat): `split_sentences` in the shape's language,
paragraphing (`split_paragraphs`, reading Markdown as `articlebot add -` does), normalisation
and keyword analysis, and the four together against English prose's.

--cli adds shapes through the real command, `articlebot add - --data-dir DIR` (a fresh folder
each, a title on the first line), beside English prose of the same size run first: wall
seconds, the ratio to prose, and whether each stays within 3x prose plus 5 s with no traceback.
"worst" takes the six shapes slowest in process; "all" takes every one.

--questions reads each shape cut to the question limit (1,000 characters) as `Collection.ask`
does: its language (`read_question`), the names and numbers a foreign question searches,
spelling, what it asks for, its terms, and whether a sentence supplies it; then asks it of a
small collection of prose, in process (the model loaded once): milliseconds a question.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from index.ingest.paragraphs import split_paragraphs
from index.text import analyze, normalize, profile
from index.text.sentences import split_sentences

SHARED = Path(__file__).resolve().parents[3] / "shared"
CLI = Path(sys.executable).with_name("articlebot")
QUESTION_LIMIT = 1_000


@dataclass(frozen=True)
class Shape:
    name: str
    language: str  # ISO 639-1: the language its sentences and terms are read in
    unit: str  # repeated to the size asked for

    def text(self, size: int) -> str:
        return (self.unit * (size // len(self.unit) + 1))[:size]


def _run(mark: str, before: str = "word", count: int = 4_990, after: str = "x ") -> str:
    """A sentence, a run of marks with no space after it, and the next word."""
    return before + mark * count + after


SHAPES = (
    # Latin marks, runs and dense ends.
    Shape("bang-run", "en", _run("!", "Here is a sentence")),
    Shape("qbang-run", "en", _run("?!", "Is it", 2_495)),
    Shape("dot-run", "en", _run(".", "Wait")),
    Shape("ellipsis-run", "en", _run("…", "Wait")),
    Shape("mixed-run", "en", _run("!?.…", "No", 1_250)),
    Shape("marks-closers-run", "en", _run('!")»', "He said", 1_250)),
    Shape("marks-spaced", "en", "! "),
    Shape("short-sentences", "en", "A! "),
    Shape("unspaced-stops", "en", "word.Word?word!"),
    Shape("abbreviations", "en", "Mr. Dr. No. e.g. "),
    Shape("initials", "en", "J. R. R. "),
    Shape("lower-after-stop", "en", "a. "),
    Shape("straight-quotes", "en", '"a. '),
    Shape("curly-quotes", "en", "“He said. "),
    Shape("german-quotes", "de", "„Nein. "),
    Shape("guillemets", "fr", "«Il dit. "),
    Shape("brackets", "en", "(a. [b. {c. "),
    Shape("ordinals", "de", "am 3. "),
    Shape("long-word", "en", "x"),
    # Other scripts' marks.
    Shape("cjk-stops", "zh", "。"),
    Shape("cjk-marks-run", "zh", _run("！？", "你好", 2_495, "好")),
    Shape("cjk-unpunctuated", "zh", "城市河流图书馆议会市场"),
    Shape("cjk-short", "zh", "好。"),
    Shape("cjk-closers", "zh", "“好！”"),
    Shape("ja-mixed", "ja", "本当？！うそ。。。"),
    Shape("devanagari-dandas", "hi", _run("।", "शहर")),
    Shape("devanagari-double", "hi", "॥ "),
    Shape("arabic-questions", "ar", _run("؟", "مدينة")),
    Shape("urdu-stops", "ur", "شہر۔"),
    Shape("thai-unspaced", "th", "สภาเมืองอนุมัติเงิน"),
    Shape("thai-spaced", "th", "สภา "),
    Shape("armenian-stops", "hy", _run("։", "քաղաք")),
    Shape("ethiopic-stops", "am", _run("።", "ከተማ")),
    Shape("greek-questions", "el", _run(";", "πόλη")),
    Shape("myanmar-sections", "my", _run("။", "မြို့")),
    Shape("myanmar-commas", "my", "မြို့၊"),
    Shape("khmer-stops", "km", _run("។", "ទីក្រុង")),
    # Invisible and combining characters.
    Shape("zwj-run", "en", "a" + "\u200d" * 5_000 + "! "),
    Shape("zwj-marks", "en", "!\u200d"),
    Shape("zwnj-persian", "fa", "کتاب\u200cخانه\u200c"),
    Shape("combining-run", "en", "e" + "\u0301" * 5_000 + ". "),
    Shape("combining-marks", "en", "!\u0301"),
    Shape("emoji-zwj", "en", "👨\u200d👩\u200d👧 "),
    Shape("bidi-controls", "ar", "\u202e\u2066نهر\u2069 "),
    # Markup.
    Shape("md-brackets", "en", "["),
    Shape("md-links-open", "en", "[a]("),
    Shape("md-backticks", "en", "`a "),
    Shape("md-stars", "en", "**a "),
    Shape("md-escapes", "en", "\\*"),
    Shape("md-table", "en", "| a | b |\n"),
    Shape("md-list", "en", "- a\n"),
    Shape("md-headings", "en", "# A\n\n"),
    Shape("html-tags", "en", "<span class=x>a</span> "),
    Shape("html-open", "en", "<a "),
    # Spaces and lines.
    Shape("no-break-spaces", "en", "a\u00a0\u00a0 "),
    Shape("blank-lines", "en", "a\n\n\n \n"),
    Shape("many-lines", "en", "a.\n"),
)
PROSE_LANGUAGES = ("en", "zh", "ar", "ru")


def prose(language: str, size: int) -> Shape:
    """XQuAD's paragraphs in `language`, blank lines between them, repeated to `size`."""
    data = json.loads((SHARED / "eval" / f"xquad.{language}.json").read_text(encoding="utf-8"))
    paragraphs = [" ".join(p["context"].split()) for a in data["data"] for p in a["paragraphs"]]
    text = ""
    for paragraph in paragraphs:
        if len(text) >= size:
            break
        text += paragraph + "\n\n"
    return Shape(f"prose-{language}", language, text)


Measure = Callable[[str, str], object]
MEASURES: dict[str, Measure] = {
    "sentences": lambda text, language: split_sentences(text, language),
    "paragraphs": lambda text, language: split_paragraphs(text, markdown=True),
    "normalise": lambda text, language: normalize(text),
    "keywords": lambda text, language: analyze(text, language),
    # What a question in another language asks for, looked for in the text: a name, a number.
    "kinds": lambda text, language: [
        profile(language).supplies(text, kind, "Wer? Кто? 谁？")
        for kind in ("person", "place", "number")
    ],
}


def seconds(measure: Measure, shape: Shape, size: int, repeat: int) -> float:
    """The best of `repeat` runs, in process seconds per 100 KB (a fresh text each run, so
    that no cache answers)."""
    best = float("inf")
    for n in range(repeat):
        text = shape.text(size - 8) + f" {n:07d}"
        started = time.process_time()
        measure(text, shape.language)
        best = min(best, time.process_time() - started)
    return best * 100_000 / size


def in_process(shapes: list[Shape], size: int, repeat: int) -> dict[str, float]:
    """Prints each shape's figures; returns each one's total."""
    print(f"seconds per 100 KB ({size:,} characters a shape, best of {repeat})")
    columns = "".join(f"{m:>11}" for m in MEASURES)
    print(f"{'shape':<22}{'lang':<5}{columns}      all  x prose")
    totals: dict[str, float] = {}
    for shape in [prose(lang, size) for lang in PROSE_LANGUAGES] + shapes:
        figures = [seconds(m, shape, size, repeat) for m in MEASURES.values()]
        totals[shape.name] = sum(figures)
        ratio = totals[shape.name] / totals["prose-en"]
        print(
            f"{shape.name:<22}{shape.language:<5}"
            + "".join(f"{f:>11.3f}" for f in figures)
            + f"{totals[shape.name]:>9.3f}{ratio:>9.1f}",
            flush=True,
        )
    return totals


def add_through_cli(shape: Shape, size: int) -> tuple[float, bool, str]:
    """Wall seconds of `articlebot add -` of the shape, whether it was added or refused in one
    sentence (no traceback), and the end of what it printed."""
    text = f"{shape.name}\n\n{shape.text(size)}\n"
    with tempfile.TemporaryDirectory(prefix="articlebot-shapes-") as folder:
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        started = time.perf_counter()
        done = subprocess.run(
            [str(CLI), "add", "-", "--data-dir", folder],
            input=text,
            capture_output=True,
            text=True,
            env=env,
        )
        wall = time.perf_counter() - started
    said = (done.stdout + done.stderr).strip()
    # Added, or refused in one sentence (a limit it passes): either is an answer, not a stall.
    refused = done.returncode == 1 and said.startswith("error:") and "\n" not in said
    return wall, (done.returncode == 0 or refused) and "Traceback" not in said, said[-200:]


def through_cli(shapes: list[Shape], size: int) -> None:
    """Each shape against English prose of its size, and against prose of its own language
    where there is some (the model's cost is per token, and scripts differ in characters a
    token: Chinese prose takes about twice English's)."""
    bases: dict[str, float] = {}
    for language in PROSE_LANGUAGES:
        bases[language], ok, _ = add_through_cli(prose(language, size), size)
        print(
            f"articlebot add - of {size:,} characters of prose-{language}: "
            f"{bases[language]:.1f} s (ok: {ok})"
        )
    base = bases["en"]
    print(f"{'shape':<22}{'lang':<5}{'seconds':>9}{'x en':>7}{'x own':>7}  within 3x en + 5 s")
    for shape in shapes:
        wall, ok, said = add_through_cli(shape, size)
        within = wall <= 3 * base + 5 and ok
        own = f"{wall / bases[shape.language]:>7.1f}" if shape.language in bases else " " * 7
        refused = "" if ok and not said.startswith("error:") else f"  ({said})"
        print(
            f"{shape.name:<22}{shape.language:<5}{wall:>9.1f}{wall / base:>7.1f}{own}  "
            f"{'yes' if within else 'NO'}{refused}",
            flush=True,
        )


def questions(shapes: list[Shape]) -> None:
    from index.search.language import names_and_numbers, read_question
    from index.search.question_kinds import expected, supplies
    from index.search.spelling import corrected
    from index.settings import Settings
    from index.text import profile

    sentence = "The council said 3,000 people came to the library in Warsaw in March 2021."
    words = analyze(prose("en", 20_000).unit, "en")
    counts = {w: words.count(w) for w in set(words)}

    def frequencies(terms: list[str]) -> dict[str, int]:
        return {t: counts.get(t, 0) for t in terms}

    def read(question: str, language: str) -> None:
        reading = read_question(question, {"en": 3, language: 1})
        names_and_numbers(question)
        corrected(question, frequencies)
        expected(question)
        for kind in ("number", "time", "person", "place", "quote"):
            supplies(sentence, kind, question)
            supplies(question, kind, sentence)
        reading_profile = profile(reading.language)
        reading_profile.asks_for(question)
        reading_profile.words(question)
        reading_profile.sentences(question)

    with tempfile.TemporaryDirectory(prefix="articlebot-shapes-") as folder:
        collection = Settings.from_env().library(Path(folder)).collection()
        collection.add_text(prose("en", 20_000).unit, title="Prose")
        print(f"\nquestions of {QUESTION_LIMIT:,} characters: milliseconds to read one, to ask")
        for shape in [prose("en", QUESTION_LIMIT)] + shapes:
            question = " ".join(normalize(shape.text(QUESTION_LIMIT)).split())
            started = time.process_time()
            read(question, shape.language)
            reading = time.process_time() - started
            started = time.perf_counter()
            try:
                collection.ask(question)
                asked = f"{1000 * (time.perf_counter() - started):>9.1f}"
            except Exception as error:  # a refusal (a question of marks alone) is an answer
                asked = f"  refused: {type(error).__name__}"
            print(f"{shape.name:<22}{shape.language:<5}{1000 * reading:>9.1f}{asked}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="characters a shape")
    parser.add_argument("--repeat", type=int, default=2, help="runs a figure, the best kept")
    parser.add_argument("--only", help="shapes to measure, comma-separated")
    parser.add_argument("--cli", help="shapes to add through articlebot: NAME,..., worst or all")
    parser.add_argument("--cli-size", type=int, default=50_000, help="characters a CLI add")
    parser.add_argument("--questions", action="store_true", help="read each shape as a question")
    args = parser.parse_args()
    by_name = {s.name: s for s in SHAPES}
    shapes = [by_name[n] for n in args.only.split(",")] if args.only else list(SHAPES)
    totals = in_process(shapes, args.size, args.repeat)
    if args.cli:
        if args.cli == "all":
            chosen = list(SHAPES)
        elif args.cli == "worst":
            ranked = sorted(shapes, key=lambda s: totals[s.name], reverse=True)
            chosen = ranked[:6]
        else:
            chosen = [by_name[n] for n in args.cli.split(",")]
        through_cli(chosen, args.cli_size)
    if args.questions:
        questions(shapes)


if __name__ == "__main__":
    main()
