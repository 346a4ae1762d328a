"""A stored article read back as what its summary is chosen from (choose.ArticleText): its
passages, their vectors and their sentence vectors, as the store keeps them. No model is asked:
a summary chosen again (an older release's article, a rebuild) costs reads only."""

from __future__ import annotations

import numpy as np

from index.records import Article
from index.storage.interface import ArticleStore
from index.storage.sentence_rows import split_of
from index.summaries.choose import ArticleText
from index.text import profile

__all__ = ["article_text"]


def article_text(
    store: ArticleStore, collection: str, article: Article, model: tuple[str, int] | None
) -> ArticleText:
    """What `article`'s summary is chosen from, read from `store` (vectors made by `model`)."""
    passages = store.article_passages(collection, article.id)
    ids = [p.id for p in passages]
    vectors: np.ndarray | None = None
    rows: list[np.ndarray | None] = []
    if model is not None and ids:
        found: dict[int, np.ndarray] = {}
        for batch_ids, batch in store.iter_embeddings(collection, model[1], ids):
            found.update(zip((int(i) for i in batch_ids), batch, strict=True))
        if len(found) == len(ids):
            vectors = np.stack([found[i] for i in ids])
        stored = store.sentence_vectors(ids, *model)
        language = profile(article.language)
        for p in passages:
            row = stored.get(p.id)
            rows.append(
                row.vectors if row and row.split == split_of(language.sentences(p.text)) else None
            )
    return ArticleText(
        title=article.title,
        language=article.language,
        passages=[(p.paragraph, p.text) for p in passages],
        vectors=vectors,
        sentence_rows=rows,
    )
