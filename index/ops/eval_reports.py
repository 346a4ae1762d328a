"""The figures an evaluation reports (`articlebot eval`): retrieval and answers over questions
that should be answered, or how often the bot answers and declines when it should."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["AbstentionReport", "Report"]


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
    seconds_per_question: float | None  # None when scoring answers read from a file
    impossible_abstained: float | None = None  # SQuAD 2.0's unanswerable questions, if any
    impossible_questions: int = 0
    question_ms_p50: float | None = None  # time to answer one question: median
    question_ms_p95: float | None = None
    # A gold answer anywhere in the answer's text, NFKC and case folded (no word edges): what
    # a reader checking the quote finds; and in the first cited passage, what the quote could
    # have held at best.
    containment_in_text: float | None = None
    first_cited_holds: float | None = None
    answer_chars_p50: float | None = None  # the median length of an answer shown
    part: str | None = None  # only questions about this part's articles (ops/eval_split.py)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["recall"] = {f"@{k}": round(v, 4) for k, v in self.recall.items()}
        for key in (
            "mrr",
            "containment",
            "abstained",
            "impossible_abstained",
            "containment_in_text",
            "first_cited_holds",
        ):
            data[key] = _round(data[key])
        data["seconds_per_question"] = _round(self.seconds_per_question)
        return data


@dataclass(frozen=True)
class AbstentionReport:
    """Questions about articles indexed should be answered, about articles missing declined.

    Either half the articles are indexed and the other half are missing, or (leave one out)
    every article is indexed and each question is asked twice: as it is, and with its own
    article left out of the search, so that the missing article meets every other one.
    """

    file: str
    collection: str
    indexed_articles: int
    held_out_articles: int
    answerable_questions: int
    unanswerable_questions: int
    answered: float  # share of questions about indexed articles that got an answer
    abstained: float  # share of questions about held-out articles that were declined
    seconds_per_question: float | None
    question_ms_p50: float | None = None
    question_ms_p95: float | None = None
    leave_one_out: bool = False
    part: str | None = None  # only questions about this part's articles (ops/eval_split.py)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("answered", "abstained", "seconds_per_question"):
            data[key] = _round(data[key])
        return data


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
