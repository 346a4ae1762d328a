"""What both retrieval backends read the same way from their store: passages and story words."""

from __future__ import annotations

from collections.abc import Collection as Container

from index.ingest.analysis import analyze
from index.records import Passage
from index.storage.interface import ArticleStore

__all__ = ["PassageReads"]


class PassageReads:
    """Reads of one collection's passages, through whichever store holds them."""

    store: ArticleStore
    collection: str

    def article_passages(self, article_ids: Container[int]) -> list[Passage]:
        return [p for aid in article_ids for p in self.store.passages(self.collection, aid)]

    def leading_passages(self, article_ids: list[int], paragraphs: int) -> list[Passage]:
        return self.store.leading_passages(self.collection, article_ids, paragraphs)

    def passages(self, ids: list[int]) -> dict[int, Passage]:
        return self.store.passages_by_id(ids)

    def languages(self) -> dict[str, int]:
        return self.store.collection_languages(self.collection)

    def story_words(self, article_id: int, language: str | None) -> set[str]:
        """Every keyword of an article, its title's and its passages', read in `language`
        (the question's analysis, so that the two compare)."""
        article = self.store.get_article(self.collection, article_id)
        words = set(analyze(article.title, language)) if article else set()
        for passage in self.store.passages(self.collection, article_id):
            words.update(analyze(passage.text, language))
        return words
