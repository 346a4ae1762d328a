"""Extractive answers: the sentences that answer a question, each with its source number."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np

from .models import Answer, Article, Citation
from .search import Hit
from .sentences import split_sentences
from .store import Passage

__all__ = ["ABSTAIN_TEXT", "compose", "fragment_link"]

# Below this question-passage cosine the best passage is taken as not about the question.
MIN_COSINE = 0.30
# A second sentence joins the answer only when it scores nearly as well as the best.
SECOND_SENTENCE_RATIO = 0.92
MAX_ANSWER_SENTENCES = 2

ABSTAIN_TEXT = (
    "I could not find an answer to that in these articles. The closest passages are listed below."
)

_WORD = re.compile(r"\w+")
_STOP = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on or that "
    "the their this to was were what when where which who whom whose why will with".split()
)

Encoder = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class _Sentence:
    hit_rank: int
    text: str
    score: float


def _keywords(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if w not in _STOP}


def fragment_link(url: str | None, quote_text: str) -> str | None:
    """The article URL with a text fragment that scrolls a browser to the quoted sentence."""
    if not url:
        return None
    words = quote_text.split()
    if not words:
        return url

    def enc(part: list[str]) -> str:
        # '-' , '&' and ',' have meanings inside a text directive, so they are escaped too.
        return quote(" ".join(part), safe="").replace("-", "%2D")

    directive = enc(words) if len(words) <= 8 else f"{enc(words[:4])},{enc(words[-4:])}"
    return f"{url.split('#', 1)[0]}#:~:text={directive}"


def _score_sentences(
    question: str, query: np.ndarray, hits: list[Hit], passages: dict[int, Passage], encode: Encoder
) -> list[_Sentence]:
    items: list[tuple[int, str]] = []
    for rank, hit in enumerate(hits):
        for sentence in split_sentences(passages[hit.passage_id].text):
            items.append((rank, sentence))
    if not items:
        return []
    vectors = encode([s for _, s in items])
    cosines = vectors @ query
    asked = _keywords(question)
    top = hits[0].score or 1.0
    scored = []
    for (rank, sentence), cos in zip(items, cosines, strict=True):
        overlap = len(asked & _keywords(sentence)) / len(asked) if asked else 0.0
        # The passage's own rank is a prior: a good sentence in the best passage beats an
        # equally good one further down.
        prior = hits[rank].score / top
        scored.append(_Sentence(rank, sentence, float(cos) + 0.3 * overlap + 0.2 * prior))
    return scored


def compose(
    question: str,
    query: np.ndarray,
    hits: list[Hit],
    passages: dict[int, Passage],
    articles: dict[int, Article],
    encode: Encoder,
) -> Answer:
    """Build the answer from ranked hits, or abstain when the best hit is not relevant."""
    if not hits:
        return Answer(question, "There are no articles to answer from yet; add one first.", True, [])
    sentences = _score_sentences(question, query, hits, passages, encode)
    best_by_rank: dict[int, _Sentence] = {}
    for s in sentences:
        if s.hit_rank not in best_by_rank or s.score > best_by_rank[s.hit_rank].score:
            best_by_rank[s.hit_rank] = s

    abstained = hits[0].dense < MIN_COSINE
    chosen: list[_Sentence] = []
    if not abstained and sentences:
        ranked = sorted(sentences, key=lambda s: -s.score)
        chosen = [ranked[0]]
        for s in ranked[1:MAX_ANSWER_SENTENCES]:
            if s.score >= SECOND_SENTENCE_RATIO * ranked[0].score:
                chosen.append(s)

    shown = hits[:3] if abstained else hits
    citations: list[Citation] = []
    for n, hit in enumerate(shown, start=1):
        passage = passages[hit.passage_id]
        article = articles[passage.article_id]
        used = [s.text for s in chosen if s.hit_rank == n - 1]
        fallback = best_by_rank.get(n - 1)
        quote_text = " ".join(used) or (fallback.text if fallback else passage.text)
        citations.append(
            Citation(
                n=n,
                article_id=article.id,
                title=article.title,
                url=article.url,
                paragraph=passage.paragraph,
                text=passage.text,
                quote=quote_text,
                score=hit.score,
                site=article.site,
                published=article.published,
                link=fragment_link(article.url, quote_text),
            )
        )
    if abstained:
        return Answer(question, ABSTAIN_TEXT, True, citations)
    # Sentences keep the order they have in the sources, so the answer reads naturally.
    chosen.sort(key=lambda s: s.hit_rank)
    text = " ".join(f"{s.text} [{s.hit_rank + 1}]" for s in chosen)
    return Answer(question, text, False, citations)
