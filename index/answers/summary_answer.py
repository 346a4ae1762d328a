"""An article's summary given as the answer to a question that asks what it is about: its
sentences quoted as an answer quotes, `[n]` after each paragraph's, each paragraph a source.

And, where a question asks what "the article" is about and several could be meant, the newest
of them, each with its summary's first line cited, and how to ask about one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from index.answers.compose import fragment_link
from index.messages.catalogue import N_
from index.records import Answer, Article, Citation, Passage, Summary
from index.text import profile

__all__ = ["WHICH_ARTICLE", "choice_answer", "summary_answer"]

WHICH_ARTICLE = N_(
    "Several articles could be meant; these are the newest. Ask about one with /ask's article "
    "option (or `articlebot ask --article ID`), or name it in the question."
)


def _passage_of(passages: Sequence[Passage], paragraph: int, sentence: str) -> Passage | None:
    for passage in passages:
        if passage.paragraph == paragraph and sentence in passage.text:
            return passage
    return None


def _citation(n: int, article: Article, passage: Passage, quote: str) -> Citation:
    return Citation(
        n=n,
        article_id=article.id,
        title=article.title,
        url=article.url,
        paragraph=passage.paragraph,
        text=passage.text,
        quote=quote,
        score=1.0,
        site=article.site,
        published=article.published,
        author=article.author,
        link=fragment_link(article.url, quote),
    )


def summary_answer(question: str, summary: Summary, passages: Sequence[Passage]) -> Answer:
    """The summary as the answer: each run of its sentences from one passage quoted, then
    that passage's number."""
    groups: list[tuple[Passage, list[str]]] = []
    for sentence in summary.sentences:
        passage = _passage_of(passages, sentence.paragraph, sentence.text)
        if passage is None:  # the article changed under it: not quoted, never invented
            continue
        if groups and groups[-1][0].id == passage.id:
            groups[-1][1].append(sentence.text)
        else:
            groups.append((passage, [sentence.text]))
    citations = []
    parts = []
    # Chinese and Japanese sentences follow one another with no space between them.
    joiner = "" if profile(summary.article.language).script == "CJK" else " "
    for n, (passage, sentences) in enumerate(groups, start=1):
        quote = joiner.join(sentences)
        citations.append(_citation(n, summary.article, passage, quote))
        parts.append(f"{quote} [{n}]")
    return Answer(question, " ".join(parts), False, citations)


def choice_answer(
    question: str, summaries: Sequence[Summary], passages: Mapping[int, Sequence[Passage]]
) -> Answer:
    """The newest articles, each with its summary's first line cited: which one is meant?"""
    citations: list[Citation] = []
    lines = [WHICH_ARTICLE]
    for summary in summaries:
        first = summary.sentences[0] if summary.sentences else None
        found = (
            _passage_of(passages[summary.article.id], first.paragraph, first.text)
            if first
            else None
        )
        if first is None or found is None:
            continue
        n = len(citations) + 1
        citations.append(_citation(n, summary.article, found, first.text))
        lines.append(f"#{summary.article.number} {summary.article.title}: {first.text} [{n}]")
    return Answer(question, "\n".join(lines), False, citations)
