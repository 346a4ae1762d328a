"""The written answer: the extractive answer's passages given to the writer, what it wrote
checked, and the answer to show: the written one when every check passed, else the extractive
one with why (`writer_fallback`), never an exception.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

from index.answers.compose import fragment_link
from index.answers.summary_answer import WHICH_ARTICLE
from index.messages.catalogue import ENGLISH, N_, translate
from index.messages.choice import locale_of_language
from index.records import Answer, Citation
from index.writer.checks import Floors, SentenceModel, Verdict, check
from index.writer.seam import Request, Source, Writer

__all__ = [
    "NOT_CONFIGURED",
    "SUMMARY_QUESTION",
    "Written",
    "fallback",
    "write_answer",
    "write_summary",
]

NOT_CONFIGURED = "not configured"
# What the writer is asked of a summary, in the article's language (the catalogue's words):
# it answers in the question's language, and the summary should read as the article does.
SUMMARY_QUESTION = N_("What is this article about? Say it in a few sentences.")


@dataclass(frozen=True)
class Written:
    """What the writer step gave: the answer to show, the kind of its outcome ("written", or
    why not: a short fixed word, for the count), and the seconds the writer took."""

    answer: Answer
    kind: str
    seconds: float = 0.0

    @property
    def written(self) -> bool:
        return self.answer.written_by is not None


def fallback(answer: Answer, reason: str, kind: str, seconds: float = 0.0) -> Written:
    """The extractive answer, with why the writer's is not shown."""
    return Written(dataclasses.replace(answer, writer_fallback=reason), kind, seconds)


def write_answer(
    answer: Answer,
    writer: Writer | None,
    model: SentenceModel,
    *,
    floors: Floors | None = None,
) -> Written:
    """The answer to show for `answer` (extractive, from the core): the writer's, in its own
    words from the passages `answer` cites, when every check passes; else `answer` itself.

    A declined question is not given to the writer; nor an answer with nothing to cite.
    """
    if writer is None:
        return fallback(answer, NOT_CONFIGURED, "not_configured")
    if answer.abstained:
        return fallback(answer, "declined: the writer is not asked", "declined")
    if not answer.citations or answer.answer.startswith(WHICH_ARTICLE):
        return fallback(answer, "nothing for the writer to answer from", "declined")
    sources = tuple(Source(c.n, c.title, c.text) for c in answer.citations)
    started = time.perf_counter()
    draft = writer.write(Request(answer.question, sources))
    verdict = check(draft, sources, model, floors)
    seconds = draft.seconds or time.perf_counter() - started
    if verdict.problem is not None:
        return fallback(answer, verdict.problem, verdict.kind, seconds)
    written = dataclasses.replace(
        answer,
        answer=verdict.text,
        citations=_quoting(answer.citations, verdict),
        written_by=writer.model,
        writer_fallback=None,
    )
    return Written(written, "written", seconds)


def write_summary(
    summary: Answer,
    language: str | None,
    writer: Writer | None,
    model: SentenceModel,
    *,
    floors: Floors | None = None,
) -> Written:
    """An article's summary (its summary answer: the sentences chosen, each passage cited) in
    the writer's words, in the article's `language`, checked sentence by sentence against the
    passages it cites as any written answer is; else the summary as it is, with why."""
    locale = locale_of_language(language or "en") or ENGLISH
    asked = dataclasses.replace(summary, question=translate(locale, SUMMARY_QUESTION))
    written = write_answer(asked, writer, model, floors=floors)
    return dataclasses.replace(
        written, answer=dataclasses.replace(written.answer, question=summary.question)
    )


def _quoting(citations: list[Citation], verdict: Verdict) -> list[Citation]:
    """Each cited passage quoting the sentences that support what was written from it, its
    link scrolling to them: the quotes stay one click away."""
    out = []
    for c in citations:
        supporting = verdict.support.get(c.n)
        if supporting:
            order = sorted(supporting, key=lambda s: c.text.find(s))
            quote = " … ".join(order)
            c = dataclasses.replace(c, quote=quote, link=fragment_link(c.url, quote))
        out.append(c)
    return out
