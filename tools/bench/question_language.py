"""How often a question's locale is its own language's: index.messages.question_locale over
every question of the XQuAD files in ../shared/eval (short questions, one language a file).

    .venv/bin/python -m tools.bench.question_language

Printed for each file: the questions whose locale is their language's, those that fell back
(English: the language was not clear), and those given another language's locale, with a few
of them.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from index.messages import question_locale
from index.messages.choice import locale_of_language

EVAL = Path(__file__).resolve().parents[3] / "shared" / "eval"
FILES = {
    "xquad.en.json": "en",
    "xquad.de.json": "de",
    "xquad.el.json": "el",
    "xquad.ru.json": "ru",
    "xquad.tr.json": "tr",
    "xquad.vi.json": "vi",
    "xquad.zh.json": "zh",
    "xquad.ar.json": "ar",
}


def main() -> None:
    print(f"{'file':<18}{'questions':>10}{'own':>8}{'fell back':>11}{'another':>9}")
    for name, language in FILES.items():
        data = json.loads((EVAL / name).read_text(encoding="utf-8"))["data"]
        questions = [q["question"] for a in data for p in a["paragraphs"] for q in p["qas"]]
        own = locale_of_language(language)
        kinds: Counter[str] = Counter()
        wrong: list[tuple[str, str]] = []
        for question in questions:
            got = question_locale(question, fallback="none-such")
            if got == own:
                kinds["own"] += 1
            elif got == "en-US" and own != "en-US":
                kinds["fell back"] += 1
            else:
                kinds["another"] += 1
                wrong.append((got, question))
        n = len(questions)
        print(
            f"{name:<18}{n:>10}{kinds['own'] / n:>8.3f}{kinds['fell back'] / n:>11.3f}"
            f"{kinds['another'] / n:>9.3f}"
        )
        for got, question in wrong[:3]:
            print(f"    {got}: {question}")


if __name__ == "__main__":
    main()
