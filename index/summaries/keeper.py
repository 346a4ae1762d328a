"""One collection's summaries: chosen for an article as it is added, read back from the store,
and chosen from what is stored for an article that has none (one an older release stored)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from index.answers.summary_answer import choice_answer, summary_answer
from index.records import Answer, Article, Passage, Summary, SummarySentence
from index.storage.interface import ArticleStore
from index.summaries.choose import ArticleText, one_line, render, summarize
from index.summaries.overview import MOST_CHARS, OverviewReader, QueryEncoder, phrasings
from index.summaries.rules import RULES, SummaryRules
from index.summaries.stored import article_text
from index.text import analyze

__all__ = ["SummaryKeeper"]

# Questions read by one model share its phrasings' vectors: one reader a model and runtime, per
# process (two runtimes of one model, int8 and fp32, each keep theirs rather than embedding the
# phrasings again at every question that alternates between them); a model loaded again
# replaces its runtime's reader, so an old one is not kept alive.
_READERS: dict[tuple[str, str], OverviewReader] = {}


class SummaryKeeper:
    """The summaries of the articles of `collection` in `store`."""

    def __init__(
        self,
        store: ArticleStore,
        collection: str,
        model: Callable[[], QueryEncoder],
        rules: SummaryRules = RULES,
    ) -> None:
        self.store = store
        self.collection = collection
        self.model = model
        self.rules = rules

    def for_new(
        self,
        title: str,
        language: str | None,
        passages: Sequence[tuple[int, str]],
        vectors: np.ndarray,
        sentence_rows: Sequence[np.ndarray | None],
    ) -> list[SummarySentence]:
        """The summary of an article being added, from the vectors its add just made."""
        text = ArticleText(title, language, passages, vectors, sentence_rows)
        return summarize(text, self.rules)

    def _stored_text(self, article: Article) -> ArticleText:
        model = self.store.collection_model(self.collection)
        return article_text(self.store, self.collection, article, model)

    def _record(self, article: Article, sentences: list[SummarySentence]) -> Summary:
        return Summary(
            article,
            sentences,
            render(sentences, article.language),
            one_line(sentences, article.language),
        )

    def of(self, article: Article, sentences: int | None = None) -> Summary:
        """`article`'s summary as stored (chosen now, and stored, where it has none); with
        `sentences`, that many of its sentences, chosen now and not stored."""
        if sentences is not None:
            chosen = summarize(self._stored_text(article), self.rules, sentences=sentences)
            return self._record(article, chosen)
        return self.of_many([article])[0]

    def of_many(self, articles: Sequence[Article]) -> list[Summary]:
        """The summaries of these articles, in their order."""
        stored = self.store.summaries(self.collection, [a.id for a in articles])
        missing = {
            a.id: summarize(self._stored_text(a), self.rules)
            for a in articles
            if a.id not in stored
        }
        if missing:
            self.store.set_summaries(self.collection, missing)
            stored.update(missing)
        return [self._record(a, stored[a.id]) for a in articles]

    def choose_again(self, articles: Sequence[Article], *, every: bool) -> int:
        """Choose the summaries again from what is stored: of every article (its vectors are a
        new model's), or only of those that have none; how many were chosen."""
        have = (
            set() if every else set(self.store.summaries(self.collection, [a.id for a in articles]))
        )
        chosen = {
            a.id: summarize(self._stored_text(a), self.rules) for a in articles if a.id not in have
        }
        if chosen:
            self.store.set_summaries(self.collection, chosen)
        return len(chosen)

    def asks_something(self, message: str) -> bool:
        """Whether a message in a conversation asks something (overview.py), in any language."""
        return self.reader().asks_something(message)

    def reader(self) -> OverviewReader:
        model = self.model()
        key = (model.name, str(getattr(model, "backend", "")))
        reader = _READERS.get(key)
        if reader is None or reader.model is not model:
            reader = _READERS[key] = OverviewReader(model)
        return reader

    # questions that ask what an article is about

    def answer_overview(
        self,
        question: str,
        article_ids: Iterable[int] | None,
        articles: Callable[[], list[Article]],
    ) -> Answer | None:
        """The summary that answers `question`, when it asks what an article is about: of the
        one article in scope (asked of, or the collection's only one), else of the one its
        words name; where several could be meant, the newest, to choose among. None: a
        question of fact, answered as any other."""
        if len(question) > MOST_CHARS:
            return None
        ids = None if article_ids is None else list(dict.fromkeys(article_ids))
        if ids is None and self.store.count(self.collection)[0] == 1:
            ids = [a.id for a in articles()]
        if ids is not None and len(ids) == 1:
            if not self.reader().asks_overview(question, scoped=True):
                return None
            article = self.store.get_article(self.collection, ids[0])
            return self._summary_answer(question, article) if article else None
        if not self.reader().asks_overview(question, scoped=False):
            return None
        candidates = [a for a in articles() if ids is None or a.id in ids]
        named = named_article(question, candidates)
        if named is not None:
            return self._summary_answer(question, named)
        newest = self.of_many(candidates[:CHOICES])
        passages = {s.article.id: self._cited(s, first_only=True) for s in newest}
        return choice_answer(question, newest, passages)

    def _summary_answer(self, question: str, article: Article) -> Answer:
        summary = self.of(article)
        return summary_answer(question, summary, self._cited(summary))

    def _cited(self, summary: Summary, *, first_only: bool = False) -> list[Passage]:
        """The passages a summary's sentences stand in: those of the article's paragraphs up
        to the last it cites (its sentences come from the first few), not all of a long
        article's."""
        sentences = summary.sentences[:1] if first_only else summary.sentences
        if not sentences:
            return []
        last = max(s.paragraph for s in sentences)
        return self.store.leading_passages(self.collection, [summary.article.id], last)

    def answer(self, article: Article) -> Answer:
        """The article's summary as the answer to "what is it about?", its title the question."""
        return self._summary_answer(article.title, article)


# With no article in scope, an overview question lists this many of the newest to choose from.
CHOICES = 5


def named_article(question: str, articles: Sequence[Article]) -> Article | None:
    """The article whose title the question names ("what's the fire station story about?"):
    the one whose title shares the most words with it, words of the overview phrasings aside
    ("article", "story", "about"), when no other shares as many."""
    overview, _ = phrasings()
    generic: dict[str | None, set[str]] = {}
    shared: list[tuple[int, Article]] = []
    for article in articles:
        language = article.language
        if language not in generic:
            generic[language] = {t for p in overview for t in analyze(p, language)}
        asked = set(analyze(question, language)) - generic[language]
        shared.append((len(asked & set(analyze(article.title, article.language))), article))
    shared.sort(key=lambda pair: -pair[0])
    if not shared or shared[0][0] == 0 or (len(shared) > 1 and shared[1][0] == shared[0][0]):
        return None
    return shared[0][1]
