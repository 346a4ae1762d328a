"""Answer-quality evaluation on SQuAD-format files, through the real add and ask paths.

Each SQuAD article becomes one article (its title with underscores as spaces, its paragraphs in
order as the body), added with `Collection.add_text` exactly as pasted text would be; every
question goes through `Collection.ask`. A citation counts as the gold paragraph when it comes
from the question's article and its text lies inside the paragraph the question was written from
(so a piece of a split paragraph counts too).
"""

from __future__ import annotations

import json
import random
import string
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .collection import Collection
from .errors import BadInput
from .models import Answer
from .text import normalize

__all__ = [
    "AbstentionReport",
    "Dataset",
    "EvalArticle",
    "EvalQuestion",
    "Report",
    "answer_contains",
    "evaluate",
    "evaluate_abstention",
    "load_squad",
    "sample",
]

# Recall is reported at these cut-offs; the deepest decides how many passages each ask returns.
RECALL_AT = (1, 5, 10)

Progress = Callable[[str, int, int], None]


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


@dataclass(frozen=True)
class Report:
    """Retrieval and answer figures over the answerable questions asked."""

    file: str
    collection: str
    articles: int
    passages: int
    questions: int
    recall: dict[int, float]  # cut-off -> share of questions with the gold paragraph cited
    mrr: float
    containment: float  # share whose shown answer contains a gold answer string
    abstained: float  # share of these answerable questions the bot declined
    seconds_per_question: float
    impossible_abstained: float | None = None  # SQuAD 2.0's unanswerable questions, if any
    impossible_questions: int = 0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["recall"] = {f"@{k}": round(v, 4) for k, v in self.recall.items()}
        for key in ("mrr", "containment", "abstained", "impossible_abstained"):
            if data[key] is not None:
                data[key] = round(data[key], 4)
        data["seconds_per_question"] = round(self.seconds_per_question, 4)
        return data


@dataclass(frozen=True)
class AbstentionReport:
    """Half the articles indexed: questions about the other half should be declined."""

    file: str
    collection: str
    indexed_articles: int
    held_out_articles: int
    answerable_questions: int
    unanswerable_questions: int
    answered: float  # share of questions about indexed articles that got an answer
    abstained: float  # share of questions about held-out articles that were declined
    seconds_per_question: float
    extra: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("answered", "abstained", "seconds_per_question"):
            data[key] = round(data[key], 4)
        return data


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


# scoring one answer

_PUNCTUATION = str.maketrans(string.punctuation + "“”‘’–—", " " * (len(string.punctuation) + 6))


def _squash(text: str) -> str:
    return " ".join(normalize(text).split()).casefold()


def _answer_words(text: str) -> str:
    """SQuAD's answer normalization: lower case, no punctuation or articles, single spaces."""
    words = _squash(text).translate(_PUNCTUATION).split()
    return " ".join(w for w in words if w not in {"a", "an", "the"})


def answer_contains(answer_text: str, gold: Sequence[str]) -> bool:
    """Whether any gold answer appears, as whole words, in the answer a user sees."""
    shown = f" {_answer_words(answer_text)} "
    return any(g and f" {g} " in shown for g in map(_answer_words, gold))


def _gold_rank(answer: Answer, article_id: int, paragraph_text: str) -> int | None:
    gold = _squash(paragraph_text)
    for c in answer.citations:
        if c.article_id == article_id and _squash(c.text) in gold:
            return c.n
    return None


# building and asking


def build(collection: Collection, dataset: Dataset, progress: Progress | None = None) -> list[int]:
    """Add every article through the real add path; returns article ids by position.

    Already-added articles are found by their content hash, so a second run embeds nothing.
    """
    ids: list[int] = []
    for done, article in enumerate(dataset.articles):
        if progress:
            progress("Adding articles", done, len(dataset.articles))
        result = collection.add_text(
            "\n\n".join(article.paragraphs), title=article.title, source="eval"
        )
        ids.append(result.article.id)
    if progress:
        progress("Adding articles", len(dataset.articles), len(dataset.articles))
    return ids


def _ask_all(
    collection: Collection,
    questions: list[EvalQuestion],
    top_k: int,
    progress: Progress | None,
) -> tuple[list[Answer], float]:
    answers: list[Answer] = []
    seconds = 0.0
    for done, q in enumerate(questions):
        if progress and done % 25 == 0:
            progress("Asking", done, len(questions))
        started = time.perf_counter()
        answers.append(collection.ask(q.question, top_k=top_k))
        seconds += time.perf_counter() - started
    if progress:
        progress("Asking", len(questions), len(questions))
    return answers, seconds / max(1, len(questions))


def evaluate(
    collection: Collection,
    dataset: Dataset,
    *,
    file: str,
    questions: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> Report:
    """Index the dataset's articles in `collection`, ask its questions, score the answers."""
    ids = build(collection, dataset, progress)
    answerable = sample([q for q in dataset.questions if not q.impossible], questions, seed)
    impossible = sample([q for q in dataset.questions if q.impossible], questions, seed)
    answers, per_question = _ask_all(collection, answerable + impossible, max(RECALL_AT), progress)
    ranks: list[int | None] = []
    contained = declined = 0
    for q, a in zip(answerable, answers, strict=False):
        paragraph = dataset.articles[q.article].paragraphs[q.paragraph - 1]
        ranks.append(_gold_rank(a, ids[q.article], paragraph))
        contained += (not a.abstained) and answer_contains(a.answer, q.answers)
        declined += a.abstained
    n = max(1, len(answerable))
    recall = {k: sum(1 for r in ranks if r is not None and r <= k) / n for k in RECALL_AT}
    impossible_declined = sum(a.abstained for a in answers[len(answerable) :])
    _, passages = collection.store.count(collection.name)
    return Report(
        file=file,
        collection=collection.name,
        articles=len(dataset.articles),
        passages=passages,
        questions=len(answerable),
        recall=recall,
        mrr=sum(1 / r for r in ranks if r is not None) / n,
        containment=contained / n,
        abstained=declined / n,
        seconds_per_question=per_question,
        impossible_abstained=impossible_declined / len(impossible) if impossible else None,
        impossible_questions=len(impossible),
    )


def evaluate_abstention(
    collection: Collection,
    dataset: Dataset,
    *,
    file: str,
    questions: int | None = None,
    seed: int = 0,
    progress: Progress | None = None,
) -> AbstentionReport:
    """Index the first half of the articles; ask about both halves.

    Questions about the indexed half should be answered, those about the other half declined.
    """
    half = (len(dataset.articles) + 1) // 2
    build(collection, dataset.subset(range(half)), progress)
    answerable = [q for q in dataset.questions if not q.impossible]
    inside = sample([q for q in answerable if q.article < half], questions, seed)
    outside = sample([q for q in answerable if q.article >= half], questions, seed)
    answers, per_question = _ask_all(collection, inside + outside, 1, progress)
    answered = sum(not a.abstained for a in answers[: len(inside)])
    declined = sum(a.abstained for a in answers[len(inside) :])
    return AbstentionReport(
        file=file,
        collection=collection.name,
        indexed_articles=half,
        held_out_articles=len(dataset.articles) - half,
        answerable_questions=len(inside),
        unanswerable_questions=len(outside),
        answered=answered / max(1, len(inside)),
        abstained=declined / max(1, len(outside)),
        seconds_per_question=per_question,
    )
