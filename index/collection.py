"""A collection: one corpus of articles to add, list, remove, ask and rebuild.

Nothing crosses between collections. Asking is: check the question, retrieve
(search/retrieval.py), compose the answer (answers/compose.py). The passages' indexes are kept
by the collection's backend (search/embedded_backend.py: SQLite, a FAISS file and BM25 in
memory; or storage/postgres/).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Collection as Container
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

from index.answers.compose import compose
from index.embedding.embedder import Embedder, PendingVectors
from index.errors import ArticlebotError, ArticleNotFound, BadInput, IndexMismatch
from index.ingest.chunking import chunk_paragraphs
from index.ingest.near_duplicates import Fingerprint, fingerprint
from index.ingest.paragraphs import content_hash
from index.ingest.readers import Limits, read_text, read_url
from index.messages.catalogue import N_
from index.pipeline import Progress, one_ahead, rebuild
from index.records import (
    AddResult,
    Answer,
    Article,
    Document,
    Passage,
    RebuildResult,
    Stats,
    Summary,
)
from index.search.interface import CollectionBackend
from index.search.retrieval import Retriever
from index.storage.interface import ArticleStore
from index.storage.sentence_rows import made_by
from index.summaries.keeper import SummaryKeeper
from index.text import article_language, normalize, profile

__all__ = ["Collection", "Progress"]


@dataclass
class _Pending:
    """An article read and cut into passages, its vectors on the way."""

    doc: Document
    digest: str
    passages: list[tuple[int, int, str]]
    vectors: PendingVectors
    fingerprint: Fingerprint
    same_url_is_new: bool = False
    model: str = ""  # the model embedding it
    sentences: list[tuple[str, ...]] = dataclasses.field(default_factory=list)  # each passage's


class ModelSource(Protocol):
    """Where a collection gets the embedding model: loaded at its first use, named before
    (a Library, which shares one model among its collections)."""

    @property
    def embedder(self) -> Embedder: ...

    def embedder_name(self) -> str: ...

    def embedder_for(self, name: str | None) -> Embedder: ...

    def release_unused_models(self) -> None: ...


class Collection:
    """One corpus: its articles in `store`, its indexes in `backend`, given by the Library that
    makes it, which also passes the model and the limits on what is read and asked."""

    def __init__(
        self,
        name: str,
        *,
        store: ArticleStore,
        backend: CollectionBackend,
        model: ModelSource,
        limits: Limits,
        max_question_chars: int,
    ) -> None:
        self.name = name
        self.store = store
        self.backend = backend
        self.model = model
        self.limits = limits
        self.max_question_chars = max_question_chars
        # The retriever encodes the question with the collection's model, loaded at first use.
        self.retriever = Retriever(self.backend, self.embedder)
        self.summaries = SummaryKeeper(store, name, self.embedder)

    # adding

    def add_url(self, url: str, *, title: str | None = None, **kw: object) -> AddResult:
        return self.add(read_url(url, title=title, limits=self.limits), **kw)  # type: ignore[arg-type]

    def add_text(
        self, text: str, *, title: str | None = None, source: str = "text", **kw: object
    ) -> AddResult:
        doc = read_text(text, title=title, source=source, limits=self.limits)
        return self.add(doc, **kw)  # type: ignore[arg-type]

    def add(
        self, doc: Document, *, added_by: str | None = None, progress: Progress | None = None
    ) -> AddResult:
        """Store and index an article; the same text (or canonical URL) is stored only once."""
        return self._finish(self._begin(doc), added_by, progress)

    def add_many(
        self,
        readers: Iterable[Callable[[], Document]],
        *,
        added_by: str | None = None,
        progress: Progress | None = None,
    ) -> Iterator[AddResult | ArticlebotError]:
        """Add each reader's article, in order: an input that fails gives its error, not a stop.

        While one article's passages are embedded, the next is read, cut and queued behind
        them, so that the embedding never waits for reading and no core idles between articles.
        """

        def begin(read: Callable[[], Document]) -> _Pending | AddResult | ArticlebotError:
            try:
                return self._begin(read())
            except ArticlebotError as exc:
                return exc

        def drop(started: _Pending | AddResult | ArticlebotError) -> None:
            if isinstance(started, _Pending):
                started.vectors.cancel()

        with contextlib.closing(one_ahead(readers, begin, drop)) as ahead:
            for started in ahead:
                yield self._finish_or_error(started, added_by, progress)

    def _begin(self, doc: Document, *, same_url_is_new: bool = False) -> _Pending | AddResult:
        """Everything before storing: the duplicate check, cutting, and starting the embedding."""
        digest = content_hash(doc.paragraphs)
        existing = self.store.find_existing(self.name, digest, None if same_url_is_new else doc.url)
        if existing:
            return AddResult(existing, added=False, skipped=doc.skipped)
        signed = fingerprint(doc.paragraphs)
        # Another address for the same story, a wire copy, a version with a line changed: the
        # article is reported as present, like an exact copy; a refresh of the stored article's
        # own link is how a new version replaces it.
        if not same_url_is_new:
            self._sign_old_articles()
            similar = self.store.find_similar(self.name, signed)
            if similar:
                return AddResult(similar, added=False, skipped=doc.skipped, near_duplicate=True)
        if doc.language is None:
            doc = dataclasses.replace(doc, language=article_language(doc.paragraphs))
        embedder = self.embedder()
        passages = chunk_paragraphs(
            doc.paragraphs, embedder.token_counts, embedder.max_tokens, doc.language
        )
        self.limits.check_room(*self.store.count(self.name), len(passages))
        texts = [text for _, _, text in passages]
        # Each passage's sentences get their vectors in the same pass (quotes are chosen by them).
        sentences = [profile(doc.language).sentences(text) for text in texts]
        vectors = embedder.start_documents(texts, sentences)
        return _Pending(
            doc, digest, passages, vectors, signed, same_url_is_new, embedder.name, sentences
        )

    def _sign_old_articles(self) -> None:
        """Sign the articles stored before signatures were, a hundred at a time, so that a
        data folder from an older version finds near-duplicates among them too."""
        while unsigned := self.store.unsigned_articles(self.name):
            signed = {aid: fingerprint(texts) for aid, texts in unsigned.items()}
            self.store.sign_articles(self.name, signed)

    def _finish(
        self, started: _Pending | AddResult, added_by: str | None, progress: Progress | None
    ) -> AddResult:
        if isinstance(started, AddResult):
            return started

        def report(done: int, total: int) -> None:
            if progress:
                progress("Embedding", done, total)

        vectors = started.vectors.result(report)
        doc = started.doc
        summary = self.summaries.for_new(
            doc.title,
            doc.language,
            [(paragraph, text) for paragraph, _, text in started.passages],
            vectors,
            started.vectors.sentences(),
        )
        embedder = self.embedder()
        if self.store.collection_model(self.name) is None:
            self.store.set_collection_model(self.name, embedder.name, embedder.dim)
        article, added = self.store.insert_article(
            self.name,
            started.doc,
            started.digest,
            started.passages,
            vectors,
            added_by,
            fingerprint=started.fingerprint,
            same_url_is_new=started.same_url_is_new,
            sentences=made_by(started.model, started.vectors.sentences(), started.sentences),
            summary=summary,
        )
        if added:
            self.backend.changed()
        return AddResult(article, added=added, skipped=started.doc.skipped)

    def _finish_or_error(
        self,
        started: _Pending | AddResult | ArticlebotError,
        added_by: str | None,
        progress: Progress | None,
    ) -> AddResult | ArticlebotError:
        if isinstance(started, ArticlebotError):
            return started
        try:
            return self._finish(started, added_by, progress)
        except ArticlebotError as exc:
            return exc

    def embedder(self) -> Embedder:
        """The model this collection's vectors were made with; the default for a new one."""
        stored = self.store.collection_model(self.name)
        embedder = self.model.embedder_for(stored[0] if stored else None)
        if stored and stored[1] != embedder.dim:
            raise IndexMismatch(
                f"The collection {self.name!r} holds {stored[1]}-dimensional vectors, not the "
                f"{embedder.dim} of {embedder.name}; run `articlebot rebuild --reembed`."
            )
        return embedder

    # reading

    def articles(self) -> list[Article]:
        """Every article, newest first."""
        return self.store.list_articles(self.name)

    def get(self, article_id: int) -> Article:
        article = self.store.get_article(self.name, article_id)
        if article is None:
            raise ArticleNotFound(
                N_(
                    "There is no article {id} in this collection; "
                    "see `articlebot list` for the ids."
                ),
                id=str(article_id),
            )
        return article

    def passages_of(self, article_id: int) -> list[Passage]:
        """An article's passages, in order."""
        self.get(article_id)
        return self.store.article_passages(self.name, article_id)

    def summary(self, article_id: int, *, sentences: int | None = None) -> Summary:
        """What an article is about, in its own sentences (`sentences` of them, if asked)."""
        return self.summaries.of(self.get(article_id), sentences)

    def summary_answer(self, article_id: int) -> Answer:
        """The article's summary as an answer: its sentences quoted, each paragraph cited."""
        return self.summaries.answer(self.get(article_id))

    def digest(self, days: float) -> list[Summary]:
        """The articles added in the last `days` days, newest first, with their summaries."""
        since = (datetime.now(UTC) - timedelta(days=days)).isoformat(timespec="seconds")
        return self.summaries.of_many([a for a in self.articles() if a.added_at >= since])

    def refresh(self, article_id: int, *, progress: Progress | None = None) -> AddResult:
        """Fetch an article's page again; a changed text replaces the stored one.

        The new version is stored before the old one is removed, so a failure keeps the old.
        """
        old = self.get(article_id)
        if not old.url or old.source != "url":
            raise BadInput(
                N_(
                    "Article {id} was not added from a link, so there is nothing to fetch "
                    "again; remove it and add the new version instead."
                ),
                id=str(article_id),
            )
        doc = read_url(old.url, limits=self.limits)
        result = self._finish(self._begin(doc, same_url_is_new=True), old.added_by, progress)
        if result.added and result.article.id != old.id:
            self.store.delete_article(self.name, old.id)
            self.backend.changed()
        return result

    def remove(self, article_id: int) -> Article:
        article = self.get(article_id)
        self.store.delete_article(self.name, article_id)
        self.backend.changed()
        return article

    def stats(self) -> Stats:
        # Another process may add between syncing and counting; sync again so the report agrees.
        for _ in range(3):
            state = self.backend.state()
            articles, passages = self.store.count(self.name)
            if state.indexed == passages:
                break
        model = self.store.collection_model(self.name)
        return Stats(
            collection=self.name,
            articles=articles,
            passages=passages,
            indexed=state.indexed,
            model=model[0] if model else self.model.embedder_name(),
            index_type=state.kind,
            index_bytes=state.nbytes,
            dense_search=state.search,
        )

    # asking

    def ask(
        self,
        question: str,
        *,
        top_k: int = 5,
        article_ids: Container[int] | None = None,
        earlier: Sequence[str] = (),
        about: int | None = None,
    ) -> Answer:
        """The answer to `question`, from these articles only if `article_ids` is given.

        Asked what an article is about, the summary: of the article in scope, else `about`'s.

        `earlier` are the questions before this one in a conversation: their content words join
        the search, so "why did he go there?" after "Who visited Warsaw?" looks for the visit.
        The answer quotes what answers this question, as it was asked.
        """
        question = " ".join(normalize(question).split())
        limit = self.max_question_chars
        if len(question) > limit:
            raise BadInput(
                N_("The question is {length} characters long; keep it under {limit}."),
                length=f"{len(question):,}",
                limit=f"{limit:,}",
            )
        if not any(ch.isalnum() for ch in question):  # nothing to search: marks, joiners
            raise BadInput(N_("The question is empty; ask something about the articles."))
        top_k = max(1, min(int(top_k), 50))
        if self.backend.empty():
            return compose(question, None, {})
        scope = article_ids if article_ids is not None or about is None else [about]
        overview = self.summaries.answer_overview(question, scope, self.articles)
        if overview is not None:
            return overview
        found = self.retriever.retrieve(question, top_k, article_ids, earlier=earlier)
        cited = {found.passages[h.passage_id].article_id for h in found.hits}
        return compose(question, found, {aid: self.get(aid) for aid in cited})

    def ask_in_conversation(
        self,
        question: str,
        *,
        earlier: Sequence[str] = (),
        quoted: Container[int] = frozenset(),
        top_k: int = 5,
        article_ids: Container[int] | None = None,
        about: int | None = None,
    ) -> Answer:
        """A question that may carry on a conversation, as Discord threads and `articlebot chat`
        hold one: `earlier` are its last questions, `quoted` the articles their answers quoted.

        Asked first of the quoted articles ("why did he go there?" is about the story just
        quoted), then, when they do not answer it (or were removed), of all of them.
        """
        if article_ids is None and quoted:
            answer = self.ask(question, top_k=top_k, article_ids=quoted, earlier=earlier)
            if not answer.abstained:
                return answer
        return self.ask(
            question, top_k=top_k, article_ids=article_ids, earlier=earlier, about=about
        )

    # rebuilding

    def rebuild(self, *, reembed: bool = False, progress: Progress | None = None) -> RebuildResult:
        """Re-create the index from what is stored; with reembed, embed every passage again
        first (pipeline.py). Questions keep using the old index until the new one is in."""
        return rebuild(self, reembed=reembed, progress=progress)
