"""SQuAD-format files read into articles and questions, for evaluation and the reader's training."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from index.errors import BadInput

__all__ = ["Dataset", "EvalArticle", "EvalQuestion", "load_squad", "sample"]


@dataclass(frozen=True)
class EvalArticle:
    title: str
    paragraphs: list[str]


@dataclass(frozen=True)
class EvalQuestion:
    qid: str
    question: str
    answers: tuple[str, ...]
    article: int  # position of its article in the file
    paragraph: int  # 1-based paragraph number inside that article
    impossible: bool  # SQuAD 2.0: the paragraph does not hold the answer


@dataclass(frozen=True)
class Dataset:
    articles: list[EvalArticle]
    questions: list[EvalQuestion]

    def subset(self, articles: Sequence[int]) -> Dataset:
        """Only these articles (by position) and their questions, renumbered from 0."""
        keep = {old: new for new, old in enumerate(articles)}
        questions = [
            EvalQuestion(q.qid, q.question, q.answers, keep[q.article], q.paragraph, q.impossible)
            for q in self.questions
            if q.article in keep
        ]
        return Dataset([self.articles[i] for i in articles], questions)

    def asked_as(self, other: Dataset) -> Dataset:
        """These articles, with each question worded as `other` words the question of its id.

        XQuAD's files share ids across languages: English articles with German questions
        measure questions asked in another language than the articles'.
        """
        wording = {q.qid: q.question for q in other.questions}
        missing = sum(q.qid not in wording for q in self.questions)
        if missing:
            raise BadInput(
                f"{missing:,} questions have no question of the same id in the other file; "
                "give a translation of the same set (XQuAD's files share their ids)."
            )
        questions = [
            EvalQuestion(q.qid, wording[q.qid], q.answers, q.article, q.paragraph, q.impossible)
            for q in self.questions
        ]
        return Dataset(self.articles, questions)


# reading the file


def load_squad(path: str | Path) -> Dataset:
    """Read a SQuAD v1.1 or v2.0 JSON file."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        items = data["data"]
        articles: list[EvalArticle] = []
        questions: list[EvalQuestion] = []
        for a_pos, item in enumerate(items):
            title = " ".join(str(item["title"]).replace("_", " ").split())
            paragraphs = [p["context"] for p in item["paragraphs"]]
            articles.append(EvalArticle(title, paragraphs))
            for p_pos, paragraph in enumerate(item["paragraphs"], start=1):
                for qa in paragraph["qas"]:
                    answers = tuple(dict.fromkeys(a["text"] for a in qa.get("answers", [])))
                    questions.append(
                        EvalQuestion(
                            str(qa["id"]),
                            qa["question"],
                            answers,
                            a_pos,
                            p_pos,
                            bool(qa.get("is_impossible", False)) or not answers,
                        )
                    )
    except OSError as exc:
        raise BadInput(f"Cannot read {path}: {exc.strerror}; check the path.") from None
    except (ValueError, KeyError, TypeError):
        raise BadInput(
            f"{path} is not a SQuAD-format JSON file; give one with data/paragraphs/qas."
        ) from None
    if not articles:
        raise BadInput(f"{path} has no articles; give a SQuAD file with some in it.")
    return Dataset(articles, questions)


def sample(questions: list[EvalQuestion], n: int | None, seed: int) -> list[EvalQuestion]:
    """n questions drawn with a fixed seed (the same n and seed give the same questions)."""
    if n is None or n >= len(questions):
        return questions
    chosen = set(random.Random(seed).sample(range(len(questions)), n))
    return [q for i, q in enumerate(questions) if i in chosen]
