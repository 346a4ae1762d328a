"""Plain data returned by the core: articles, passages, answers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "AddResult",
    "Answer",
    "Article",
    "Citation",
    "Document",
    "Feed",
    "IndexState",
    "Passage",
    "PollResult",
    "RebuildResult",
    "Stats",
    "Summary",
    "SummarySentence",
]


@dataclass(frozen=True)
class Document:
    """An article as read from a file, a URL or pasted text, before it is stored."""

    title: str
    paragraphs: list[str]
    url: str | None = None
    site: str | None = None
    author: str | None = None
    published: str | None = None
    source: str = "text"
    skipped: list[str] = field(default_factory=list)
    # The subheading each paragraph stands under (None before the first); empty: none at all.
    headings: list[str | None] = field(default_factory=list)
    # The language it is written in (ISO 639-1), identified when it is added.
    language: str | None = None


@dataclass(frozen=True)
class Article:
    id: int
    collection: str
    title: str
    url: str | None
    site: str | None
    author: str | None
    published: str | None
    added_by: str | None
    added_at: str
    content_hash: str
    source: str
    paragraphs: int
    passages: int
    number: int = 0  # what the collection's users see ("#3"): counted in this collection alone
    # The language it is written in (ISO 639-1); None for one stored before languages were
    # (read as English until `rebuild` identifies it).
    language: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class IndexState:
    """A collection's dense index as its backend holds it."""

    indexed: int  # passages searchable
    kind: str  # "flat", "ivf", "hnsw", or "none" before anything was added
    nbytes: int  # its size where it is kept
    # How a question searches it: "exact", "ivf", and on PostgreSQL past its exact limit
    # "hnsw-iterative" (pgvector 0.8+) or "hnsw-or-exact" (older pgvector; see
    # storage/postgres/vectors.py).
    search: str = "exact"


@dataclass(frozen=True)
class Feed:
    """A news feed a collection follows: its new entries are added as articles when polled."""

    id: int
    collection: str
    url: str
    title: str | None
    added_by: str | None
    added_at: str
    checked_at: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "feed_id": self.id,
            "url": self.url,
            "title": self.title,
            "added_by": self.added_by,
            "added_at": self.added_at,
            "checked_at": self.checked_at,
        }


@dataclass(frozen=True)
class PollResult:
    """One round of polling a collection's feeds."""

    feeds: int  # feeds the collection follows
    checked: int  # of them, read successfully
    added: int  # articles added from their new entries
    failed: int  # feeds that could not be read, and entries that could not be added
    errors: list[str] = field(default_factory=list)  # one sentence each, for what failed
    articles: list[Article] = field(default_factory=list)  # those added, for announcing them

    def to_json(self) -> dict[str, Any]:
        return {
            "feeds": self.feeds,
            "checked": self.checked,
            "added": self.added,
            "failed": self.failed,
            "errors": self.errors,
        }


@dataclass(frozen=True)
class AddResult:
    article: Article
    added: bool  # False when the same text or canonical URL was already stored
    skipped: list[str]
    near_duplicate: bool = False  # present as nearly the same text (another copy, an update)

    def to_json(self) -> dict[str, Any]:
        return {
            "added": self.added,
            "already_present": not self.added,
            "near_duplicate": self.near_duplicate,
            "article_id": self.article.id,
            "title": self.article.title,
            "site": self.article.site,
            "url": self.article.url,
            "paragraphs": self.article.paragraphs,
            "passages": self.article.passages,
            "skipped_lines": len(self.skipped),
            "skipped": self.skipped,
        }


@dataclass(frozen=True)
class Citation:
    n: int
    article_id: int
    title: str
    url: str | None
    paragraph: int
    text: str
    quote: str
    score: float
    site: str | None = None
    published: str | None = None
    link: str | None = None  # the URL with a text fragment that scrolls to the quote
    author: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "article_id": self.article_id,
            "title": self.title,
            "url": self.url,
            "paragraph": self.paragraph,
            "text": self.text,
            "quote": self.quote,
            "score": round(self.score, 4),
            "site": self.site,
            "published": self.published,
            "author": self.author,
            "link": self.link,
        }


@dataclass(frozen=True)
class Answer:
    question: str
    answer: str
    abstained: bool
    citations: list[Citation]
    # The model that wrote `answer` in its own words, when its checked answer is the one shown
    # (index/writer); else None, and `writer_fallback` says why not, once the writer was asked.
    written_by: str | None = None
    writer_fallback: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "abstained": self.abstained,
            "citations": [c.to_json() for c in self.citations],
            "written_by": self.written_by,
            "writer_fallback": self.writer_fallback,
        }


@dataclass(frozen=True)
class Stats:
    collection: str
    articles: int
    passages: int
    indexed: int
    model: str
    index_type: str
    index_bytes: int
    dense_search: str = "exact"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class RebuildResult:
    collection: str
    passages: int
    reembedded: bool
    index_type: str
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Passage:
    """A stored piece of an article: a paragraph, or a piece of a long one, as it is searched."""

    id: int
    article_id: int
    paragraph: int  # 1-based, as a reader counts the article's paragraphs
    piece: int
    text: str
    heading: str | None = None  # the subheading it stands under; read only for `show`


@dataclass(frozen=True)
class SummarySentence:
    """A sentence of an article's summary: verbatim, with the paragraph it stands in."""

    paragraph: int  # 1-based, as a reader counts the article's paragraphs
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"paragraph": self.paragraph, "text": self.text}


@dataclass(frozen=True)
class Summary:
    """What an article is about, in its own sentences (chosen when it was added)."""

    article: Article
    sentences: list[SummarySentence]
    text: str  # as a member reads it
    line: str  # its first sentence or two: a digest's and a feed announcement's line

    def to_json(self) -> dict[str, Any]:
        return {
            "article_id": self.article.id,
            "title": self.article.title,
            "language": self.article.language,
            "summary": self.text,
            "sentences": [s.to_json() for s in self.sentences],
        }
