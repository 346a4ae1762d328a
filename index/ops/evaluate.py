"""Answer-quality evaluation on SQuAD-format files, through the real add and ask paths.

Each SQuAD article becomes one article (its title with underscores as spaces, its paragraphs in
order as the body), added with `Collection.add_text` exactly as pasted text would be; every
question goes through `Collection.ask`. A citation counts as the gold paragraph when it comes
from the question's article and its text lies inside the paragraph the question was written from
(so a piece of a split paragraph counts too).
"""

from __future__ import annotations

import json
import string
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from index.collection import Collection
from index.errors import BadInput
from index.ops.eval_data import Dataset, EvalArticle, EvalQuestion, load_squad, sample
from index.ops.eval_reports import AbstentionReport, Report
from index.ops.eval_split import Part, parts
from index.records import Answer
from index.text import UNSPACED, normalize

__all__ = [
    "AbstentionReport",
    "Dataset",
    "EvalArticle",
    "EvalQuestion",
    "Plan",
    "Report",
    "Scored",
    "answer_contains",
    "ask_all",
    "batch_lines",
    "build",
    "default_collection",
    "evaluate",
    "load_squad",
    "plan",
    "sample",
    "score",
]

# Recall is reported at these cut-offs; the deepest decides how many passages each ask returns.
RECALL_AT = (1, 5, 10)

Progress = Callable[[str, int, int], None]


# scoring one answer

_PUNCTUATION = str.maketrans(string.punctuation + "“”‘’–—", " " * (len(string.punctuation) + 6))


def _squash(text: str) -> str:
    return " ".join(normalize(text).split()).casefold()


def _answer_words(text: str) -> str:
    """SQuAD's answer normalization: lower case, no punctuation or articles, single spaces."""
    words = _squash(text).translate(_PUNCTUATION).split()
    return " ".join(w for w in words if w not in {"a", "an", "the"})


def answer_contains(answer_text: str, gold: Sequence[str]) -> bool:
    """Whether any gold answer appears, as whole words, in the answer a user sees (anywhere in
    it, for an answer in a script written without spaces)."""
    shown = f" {_answer_words(answer_text)} "
    return any(
        g and (f" {g} " in shown or (UNSPACED.search(g) is not None and g in shown))
        for g in map(_answer_words, gold)
    )


# building and asking


@dataclass(frozen=True)
class Scored:
    """One answer, reduced to what scoring reads (from `ask` or from `ask --batch --json`)."""

    answer: str
    abstained: bool
    cited: list[tuple[int, str]]  # (article id, passage text), best first
    seconds: float = 0.0

    @classmethod
    def from_answer(cls, answer: Answer, seconds: float = 0.0) -> Scored:
        cited = [(c.article_id, c.text) for c in answer.citations]
        return cls(answer.answer, answer.abstained, cited, seconds)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Scored:
        if "error" in data:
            return cls("", True, [])
        cited = [(int(c["article_id"]), str(c["text"])) for c in data.get("citations", [])]
        return cls(str(data.get("answer", "")), bool(data.get("abstained")), cited)


@dataclass(frozen=True)
class Plan:
    """What to index, and which questions should be answered or declined."""

    indexed: Dataset
    answer: list[EvalQuestion]  # about indexed articles, with an answer in their paragraph
    decline: list[EvalQuestion]  # SQuAD 2.0's unanswerable ones, or about articles not indexed
    abstention: bool
    leave_one_out: bool = False  # `decline` are `answer` again, each asked without its article
    part: Part | None = None  # only questions about the articles of this part (eval_split.py)

    @property
    def questions(self) -> list[EvalQuestion]:
        return self.answer + self.decline

    def scopes(self, ids: list[int]) -> list[set[int] | None]:
        """The articles each question is asked of, in the order of `questions` (None: all);
        `ids` are the article ids by position, as `build` returns them."""
        if not self.leave_one_out:
            return [None] * len(self.questions)
        every = set(ids)
        return [None] * len(self.answer) + [every - {ids[q.article]} for q in self.decline]


def plan(
    dataset: Dataset,
    *,
    abstention: bool = False,
    leave_one_out: bool = False,
    questions: int | None = None,
    seed: int = 0,
    part: Part | None = None,
) -> Plan:
    """The usual run indexes every article; the abstention run only the first half.

    Leaving one out indexes every article and asks each question twice, the second time
    without its own article: abstention at the size of the whole collection, where the
    half-indexed run measures it at half that size. Size matters on news: a missing story
    meets more stories like it among twice as many (the keyword side keeps the whole
    collection's word weights, so the left-out article still counts in them).
    With `questions`, at most that many of each kind, drawn with `seed`. With `part`, only
    questions about the articles of that part are asked (`eval_split.parts` of the dataset's
    titles); what is indexed is the same.
    """
    if part is None:
        mine = dataset.questions
    else:
        of = parts([a.title for a in dataset.articles])
        mine = [q for q in dataset.questions if of[q.article] == part]
    answerable = [q for q in mine if not q.impossible]
    if leave_one_out:
        if abstention:
            raise BadInput("Choose --abstention or --leave-one-out; each measures declining.")
        if len(dataset.articles) < 2:
            raise BadInput(
                "Leaving one out needs at least two articles; give a file or --articles span "
                "with more."
            )
        # SQuAD 2.0's unanswerable questions are left aside: here every question asked is
        # answerable once and unanswerable once, `questions` of them asked twice each.
        asked = sample(answerable, questions, seed)
        return Plan(dataset, asked, asked, True, leave_one_out=True, part=part)
    if not abstention:
        impossible = [q for q in mine if q.impossible]
        answer, decline = sample(answerable, questions, seed), sample(impossible, questions, seed)
        return Plan(dataset, answer, decline, False, part=part)
    half = (len(dataset.articles) + 1) // 2
    inside = sample([q for q in answerable if q.article < half], questions, seed)
    outside = sample([q for q in answerable if q.article >= half], questions, seed)
    return Plan(dataset.subset(range(half)), inside, outside, True, part=part)


def build(collection: Collection, dataset: Dataset, progress: Progress | None = None) -> list[int]:
    """Add every article through the real add path; returns article ids by position.

    Already-added articles are found by their content hash, so a second run embeds nothing.
    """
    wanted = {a.title for a in dataset.articles}
    if any(a.title not in wanted for a in collection.articles()):
        raise BadInput(
            f"The collection {collection.name!r} holds other articles too; "
            "evaluate in a fresh one with --collection NAME."
        )
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


def batch_lines(collection: str, questions: list[EvalQuestion]) -> list[str]:
    """JSON lines for `articlebot ask --batch`, in the order scoring expects the answers."""
    return [
        json.dumps({"question": q.question, "collection": collection, "id": q.qid})
        for q in questions
    ]


def ask_all(
    collection: Collection,
    questions: list[EvalQuestion],
    top_k: int = max(RECALL_AT),
    progress: Progress | None = None,
    scopes: Sequence[set[int] | None] | None = None,
) -> list[Scored]:
    """Each question's answer, asked of the articles its scope names (by default all)."""
    if scopes is None:
        scopes = [None] * len(questions)
    if len(scopes) != len(questions):
        raise ValueError("one scope per question")
    out: list[Scored] = []
    for done, q in enumerate(questions):
        if progress and done % 25 == 0:
            progress("Asking", done, len(questions))
        started = time.perf_counter()
        answer = collection.ask(q.question, top_k=top_k, article_ids=scopes[done])
        out.append(Scored.from_answer(answer, time.perf_counter() - started))
    if progress:
        progress("Asking", len(questions), len(questions))
    return out


def _gold_rank(answer: Scored, article_id: int, paragraph_text: str) -> int | None:
    gold = _squash(paragraph_text)
    for n, (cited_id, text) in enumerate(answer.cited, start=1):
        if cited_id == article_id and _squash(text) in gold:
            return n
    return None


def score(
    collection: Collection, the_plan: Plan, ids: list[int], answers: list[Scored], *, file: str
) -> Report | AbstentionReport:
    """Score answers given in the order of `the_plan.questions`."""
    if len(answers) != len(the_plan.questions):
        raise BadInput(
            f"There are {len(answers):,} answers for {len(the_plan.questions):,} questions; "
            "score the output of the same --questions, --seed and --part."
        )
    # Answers read back from `ask --batch` carry no timing.
    timed = sorted(a.seconds for a in answers if a.seconds)
    per_question = sum(timed) / len(timed) if timed else None
    p50 = round(1000 * timed[len(timed) // 2], 2) if timed else None
    p95 = round(1000 * timed[min(len(timed) - 1, int(0.95 * len(timed)))], 2) if timed else None
    given, declined = answers[: len(the_plan.answer)], answers[len(the_plan.answer) :]
    if the_plan.abstention:
        return AbstentionReport(
            file=file,
            collection=collection.name,
            indexed_articles=len(the_plan.indexed.articles),
            held_out_articles=len({q.article for q in the_plan.decline}),
            answerable_questions=len(given),
            unanswerable_questions=len(declined),
            answered=sum(not a.abstained for a in given) / max(1, len(given)),
            abstained=sum(a.abstained for a in declined) / max(1, len(declined)),
            seconds_per_question=per_question,
            question_ms_p50=p50,
            question_ms_p95=p95,
            leave_one_out=the_plan.leave_one_out,
            part=the_plan.part,
        )
    articles = the_plan.indexed.articles
    ranks = [
        _gold_rank(a, ids[q.article], articles[q.article].paragraphs[q.paragraph - 1])
        for q, a in zip(the_plan.answer, given, strict=True)
    ]
    depth = max((len(a.cited) for a in given), default=0)
    n = max(1, len(given))
    recall = {
        k: sum(1 for r in ranks if r is not None and r <= k) / n for k in RECALL_AT if k <= depth
    }
    contained = sum(
        (not a.abstained) and answer_contains(a.answer, q.answers)
        for q, a in zip(the_plan.answer, given, strict=True)
    )
    in_text = sum(
        (not a.abstained) and holds(a.answer, q.answers)
        for q, a in zip(the_plan.answer, given, strict=True)
    )
    first_holds = sum(
        bool(a.cited) and holds(a.cited[0][1], q.answers)
        for q, a in zip(the_plan.answer, given, strict=True)
    )
    lengths = sorted(len(a.answer) for a in given if not a.abstained)
    _, passages = collection.store.count(collection.name)
    return Report(
        file=file,
        collection=collection.name,
        articles=len(articles),
        passages=passages,
        questions=len(given),
        recall=recall,
        mrr=sum(1 / r for r in ranks if r is not None) / n,
        containment=contained / n,
        abstained=sum(a.abstained for a in given) / n,
        seconds_per_question=per_question,
        impossible_abstained=(
            sum(a.abstained for a in declined) / len(declined) if declined else None
        ),
        impossible_questions=len(declined),
        question_ms_p50=p50,
        question_ms_p95=p95,
        containment_in_text=in_text / n,
        first_cited_holds=first_holds / n,
        answer_chars_p50=float(lengths[len(lengths) // 2]) if lengths else None,
        part=the_plan.part,
    )


def holds(text: str, gold: Sequence[str]) -> bool:
    """Whether a gold answer lies anywhere in `text`, both NFKC and case folded."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return any(g.strip() and unicodedata.normalize("NFKC", g).casefold() in folded for g in gold)


def evaluate(
    collection: Collection,
    dataset: Dataset,
    *,
    file: str,
    abstention: bool = False,
    leave_one_out: bool = False,
    questions: int | None = None,
    seed: int = 0,
    part: Part | None = None,
    progress: Progress | None = None,
) -> Report | AbstentionReport:
    """Index the articles in `collection`, ask the questions through `ask`, score the answers."""
    the_plan = plan(
        dataset,
        abstention=abstention,
        leave_one_out=leave_one_out,
        questions=questions,
        seed=seed,
        part=part,
    )
    ids = build(collection, the_plan.indexed, progress)
    answers = ask_all(
        collection, the_plan.questions, progress=progress, scopes=the_plan.scopes(ids)
    )
    return score(collection, the_plan, ids, answers, file=file)


def default_collection(file: str, articles: tuple[int, int | None] | None, abstention: bool) -> str:
    """A collection name per file, article span and mode, so that runs never mix (leaving one
    out indexes what the usual run does, and shares its collection)."""
    name = f"eval-{Path(file).stem}"
    if articles:
        name += f"-{articles[0]}-{'end' if articles[1] is None else articles[1]}"
    return name + ("-abstention" if abstention else "")
