"""Extractive answers: the sentences that answer a question, each with its source number."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import numpy as np

from .keyword import tokenize
from .models import Answer, Article, Citation
from .search import Hit, Terms, coverage, term_weights
from .sentences import split_sentences
from .store import Passage

__all__ = ["ABSTAIN_TEXT", "compose", "fragment_link", "relevance"]

# Abstention. The best passage is relevant enough when its cosine with the question plus half
# the share of the question's word weight that one of its sentences holds (words found in no
# passage weigh most) reaches MIN_RELEVANCE. Calibrated with half of SQuAD v1.1 dev's articles
# indexed (even-numbered ones), asking about both halves; checked on the first/second-half split.
COVERAGE_IN_RELEVANCE = 0.5
MIN_RELEVANCE = 0.56

# The answer quotes sentences from this many of the best passages.
ANSWER_PASSAGES = 3
# A sentence's score: its cosine with the question, plus the share of the question's word weight
# it holds, plus its passage's fused score relative to the best passage's. Equal weights lie on
# the plateau of answer containment on the SQuAD tune half (0.6-2.0 each within 0.3 points).
SENTENCE_COVERAGE_WEIGHT = 1.0
PASSAGE_PRIOR_WEIGHT = 1.0
# A second sentence joins the answer only when it scores nearly as well as the best.
SECOND_SENTENCE_RATIO = 0.95
MAX_ANSWER_SENTENCES = 2

ABSTAIN_TEXT = (
    "I could not find an answer to that in these articles. The closest passages are listed below."
)

# A quotation that its attribution splits in two ("... ,” he said. “...”) is one statement:
# when the chosen sentence closes a quote with its speaker, a next sentence that opens a quote
# continues it.
_ATTRIBUTED = re.compile(
    r"[”\"’'],?\s+(?:\w+\s+){0,3}(?:said|says|added|told|asked|wrote)\b[^”\"]*$"
)
_OPENS_QUOTE = re.compile(r"^[“\"‘]")

Encoder = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class _Sentence:
    hit_rank: int
    position: int  # the sentence's place in its passage
    text: str
    score: float


def relevance(hit: Hit) -> float:
    """How surely the best hit is about the question (compared with MIN_RELEVANCE)."""
    return hit.dense + COVERAGE_IN_RELEVANCE * hit.coverage


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


def _split(hits: list[Hit], passages: dict[int, Passage]) -> list[tuple[int, int, str]]:
    items: list[tuple[int, int, str]] = []
    for rank, hit in enumerate(hits):
        for position, sentence in enumerate(split_sentences(passages[hit.passage_id].text)):
            items.append((rank, position, sentence))
    return items


def _score_sentences(
    question: str,
    query: np.ndarray,
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    encode: Encoder,
    terms: Terms | None,
) -> list[_Sentence]:
    if not items:
        return []
    cosines = encode([s for _, _, s in items]) @ query
    weights = term_weights(question, tokenize, terms) if terms else {}
    top = hits[0].score or 1.0
    scored = []
    for (rank, position, sentence), cos in zip(items, cosines, strict=True):
        cover = coverage(weights, sentence, tokenize) if weights else 0.0
        # The passage's own score is a prior: a good sentence in the best passage beats an
        # equally good one further down.
        prior = hits[rank].score / top
        score = float(cos) + SENTENCE_COVERAGE_WEIGHT * cover + PASSAGE_PRIOR_WEIGHT * prior
        scored.append(_Sentence(rank, position, sentence, score))
    return scored


def _choose(sentences: list[_Sentence]) -> list[_Sentence]:
    """The best sentence; a close second; the rest of a quotation the best one starts."""
    ranked = sorted(sentences, key=lambda s: -s.score)
    best = ranked[0]
    following = [
        s for s in sentences if s.hit_rank == best.hit_rank and s.position == best.position + 1
    ]
    if following and _ATTRIBUTED.search(best.text) and _OPENS_QUOTE.match(following[0].text):
        return [best, following[0]]
    chosen = [best]
    for s in ranked[1:MAX_ANSWER_SENTENCES]:
        if s.score >= SECOND_SENTENCE_RATIO * best.score:
            chosen.append(s)
    return chosen


def compose(
    question: str,
    query: np.ndarray,
    hits: list[Hit],
    passages: dict[int, Passage],
    articles: dict[int, Article],
    encode: Encoder,
    terms: Terms | None = None,
) -> Answer:
    """Build the answer from ranked hits, or abstain when the best hit is not relevant.

    `terms` (the keyword index) weighs the question's words when sentences are scored.
    """
    if not hits:
        return Answer(
            question, "There are no articles to answer from yet; add one first.", True, []
        )
    abstained = relevance(hits[0]) < MIN_RELEVANCE
    shown = hits[:3] if abstained else hits
    items = _split(shown[:ANSWER_PASSAGES], passages)
    sentences = _score_sentences(question, query, shown, items, encode, terms)
    best_by_rank: dict[int, _Sentence] = {}
    for s in sentences:
        if s.hit_rank not in best_by_rank or s.score > best_by_rank[s.hit_rank].score:
            best_by_rank[s.hit_rank] = s
    chosen = _choose(sentences) if sentences and not abstained else []

    citations: list[Citation] = []
    for n, hit in enumerate(shown, start=1):
        passage = passages[hit.passage_id]
        article = articles[passage.article_id]
        used = [s.text for s in sorted(chosen, key=lambda s: s.position) if s.hit_rank == n - 1]
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
    chosen.sort(key=lambda s: (s.hit_rank, s.position))
    text = " ".join(f"{s.text} [{s.hit_rank + 1}]" for s in chosen)
    return Answer(question, text, False, citations)
