"""SQuAD v1.1 dev as articles: the paragraphs the speed benchmarks add and the questions they ask.

Each SQuAD article becomes one text file, its title on the first line and its paragraphs
separated by blank lines, as a user would paste it; files are taken in order until the
requested number of paragraphs is reached (the last one cut short).
"""

from __future__ import annotations

import json
from pathlib import Path

SHARED = Path(__file__).resolve().parents[3] / "shared"  # ../shared beside the checkout
SQUAD = SHARED / "eval" / "squad-v1.1-dev.json"
SAMPLE = SHARED / "samples" / "000_bcf5d6bb99a2ac0a.txt"

# Questions about the sample article (../shared/samples), as a reader would ask them.
SAMPLE_QUESTIONS = [
    "Which gang was targeted?",
    "What was the $60 million judgment for?",
    "Who announced the lawsuits?",
    "Where might ICE reopen an office?",
    "What did Hochul call the lawsuits?",
    "Who is the judge?",
    "What did Adams call broken?",
]


def squad_articles(limit: int) -> list[tuple[str, list[str]]]:
    """(title, paragraphs) of SQuAD dev articles, `limit` paragraphs in all."""
    data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
    out: list[tuple[str, list[str]]] = []
    left = limit
    for article in data:
        if left <= 0:
            break
        paragraphs = [" ".join(p["context"].split()) for p in article["paragraphs"]][:left]
        out.append((article["title"].replace("_", " "), paragraphs))
        left -= len(paragraphs)
    return out


def squad_paragraphs(limit: int) -> list[str]:
    return [p for _, paragraphs in squad_articles(limit) for p in paragraphs]


def squad_questions(limit: int, paragraphs: int) -> list[str]:
    """Up to `limit` questions about the first `paragraphs` paragraphs, a few from each."""
    data = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
    contexts = [p for article in data for p in article["paragraphs"]][:paragraphs]
    per = max(1, limit // max(1, len(contexts)) + 1)
    questions = [q["question"] for p in contexts for q in p["qas"][:per]]
    return questions[:limit]


def write_articles(folder: Path, limit: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, (title, paragraphs) in enumerate(squad_articles(limit)):
        path = folder / f"{number:03d}.txt"
        path.write_text(title + "\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
        paths.append(path)
    return paths
