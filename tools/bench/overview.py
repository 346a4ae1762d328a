"""`python -m tools.bench.overview`: how often questions are read as asking what an article is
about (index/summaries/overview.py), on overview phrasings and on the evaluation sets' questions.

The overview phrasings are those of tests/summaries/test_summaries.py and more, in languages
and wordings index/summaries/overview-phrasings.json does not hold: the share read as overviews
(scoped: an article in scope; unscoped: the stricter reading with several articles and none in
scope). Every question of each evaluation file (../shared/eval: questions of fact, none asking
for a summary) is read too: the share read as an overview is the share whose answer would be
a summary instead.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from index.settings import Settings
from index.summaries.overview import CLOSE, CLOSE_UNSCOPED, MARGIN, MOST_CHARS, OverviewReader

EVAL = Path("../shared/eval")
HELD_OUT = [
    "Waar gaat dit artikel over?",
    "O czym jest ten artykuł?",
    "Vad handlar artikeln om?",
    "O čem je tento článek?",
    "Про що ця стаття?",
    "Despre ce este acest articol?",
    "Miről szól ez a cikk?",
    "Mistä tämä artikkeli kertoo?",
    "Hvad handler artiklen om?",
    "Περί τίνος πρόκειται αυτό το άρθρο;",
    "บทความนี้เกี่ยวกับอะไร",
    "על מה המאמר הזה?",
    "این مقاله درباره چیست؟",
    "Tóm tắt bài viết",
    "Ringkas artikel ini",
    "Makaleyi özetle",
    "Podsumuj artykuł",
    "Sammanfatta artikeln",
    "Shrň článek",
    "Підсумуй статтю",
    "Samenvatting graag",
    "Zusammenfassung bitte",
    "Resumo, por favor",
    "Riassumi l'articolo",
    "記事をまとめてください",
    "这个故事的重点是什么",
    "ملخص المقال من فضلك",
    "इसका सार क्या है?",
    "요약해 줘",
    "Какова суть?",
    "what's this about",
    "sum it up pls",
    "Could you give me a quick rundown?",
    "Quelle est l'idée principale ?",
]
FILES = [
    "squad-v1.1-dev.json",
    "newsqa-dev-tune.json",
    "squad-v2.0-dev-half.json",
    *[f"xquad.{lang}.json" for lang in ("en", "de", "ru", "ar", "tr", "vi", "el", "zh")],
    "xquad_en-ctx_ru-q.json",
    "xquad_en-ctx_zh-q.json",
    "xquad_en-ctx_ar-q.json",
]


def read(reader: OverviewReader, question: str) -> tuple[bool, bool]:
    """(read as an overview with an article in scope, and with none)."""
    if len(question) > MOST_CHARS or not any(ch.isalpha() for ch in question):
        return False, False
    close, margin = reader.closeness(question)
    return close >= CLOSE and margin > MARGIN, close >= CLOSE_UNSCOPED and margin > MARGIN


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=0, help="questions a file (0: all)")
    args = parser.parse_args()
    library = Settings.from_env().library(Path("data/overview-bench"))
    reader = OverviewReader(library.embedder)
    found = [read(reader, q) for q in HELD_OUT]
    print(
        f"model {library.embedder.name}; close {CLOSE} ({CLOSE_UNSCOPED} unscoped), margin {MARGIN}"
    )
    print(
        f"overview phrasings not in the data ({len(found)}): read as overviews "
        f"{sum(s for s, _ in found) / len(found):.3f} scoped, "
        f"{sum(u for _, u in found) / len(found):.3f} unscoped"
    )
    missed = [q for q, (s, _) in zip(HELD_OUT, found, strict=True) if not s]
    if missed:
        print("  missed:", "; ".join(missed))
    for name in FILES:
        path = EVAL / name
        if not path.exists():
            continue
        data = json.loads(path.read_text(encoding="utf-8"))["data"]
        questions = [qa["question"] for a in data for p in a["paragraphs"] for qa in p["qas"]]
        if args.limit:
            questions = questions[: args.limit]
        read_as = [read(reader, q) for q in questions]
        scoped = [q for q, (s, _) in zip(questions, read_as, strict=True) if s]
        unscoped = sum(u for _, u in read_as)
        print(
            f"{name}: {len(questions)} questions, read as overviews {len(scoped)} scoped "
            f"({len(scoped) / len(questions):.4f}), {unscoped} unscoped"
        )
        for question in scoped[:3]:
            print(f"    {question}")


if __name__ == "__main__":
    main()
