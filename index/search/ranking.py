"""Hybrid retrieval: dense (FAISS) and keyword (BM25) scores fused, then the best rescored.

Pure ranking logic over plain arrays and texts; the indexes themselves live in vectors.py and
bm25_index.py. Every weight below was chosen on the first 24 articles of SQuAD v1.1 dev (all 48
pooled as distractors) and checked on the other 24; see `articlebot eval` and docs/quality.md.

What each step gained, Recall@1 over all 10,570 questions with the 48 articles pooled:
  dense only 0.63; BM25 as bm25s tokenizes by default 0.75; their plain reciprocal-rank
  fusion (k=60), the previous ranking, 0.73
  BM25 with stems and one-character numbers 0.77, + the title 0.78, + question-word stopwords 0.79
  weighted fusion of the cosine and max-normalized BM25 (below)                            0.82
  + rescoring the top 20 by their best sentence and shared word pairs (below)               0.84
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from index.search.question_kinds import expected, supplies
from index.text import Profile

__all__ = ["Hit", "Terms", "coverage", "fuse", "rescore", "term_weights", "top_hits"]

# The cosine's weight against BM25 divided by the question's best BM25 score (so the keyword
# side lies in [0, 1] whatever the question's length). A plateau from 1.0 to 2.0; 1.5 is its middle.
DENSE_WEIGHT = 1.5
# How many fused candidates the second stage reads: twice the deepest cut-off reported (10), so
# rescoring can lift a passage from anywhere in it (fusion alone has 98% of gold within 10).
RESCORE_DEPTH = 20
# Second-stage weights: the share of the question's word weight found in one sentence of the
# passage (SQuAD questions, like most questions, paraphrase one sentence), and the share of the
# question's adjacent word pairs found in the passage. Chosen on a grid; 0.3-1.0 and 0.2-0.4
# lie on a plateau within 0.5 points of Recall@1. With BM25 at k1 0.9, b 0.4 (bm25_index.py) word
# pairs weigh 0.5: SQuAD pooled (10,570) R@1 0.839 -> 0.840, containment 0.803 -> 0.805; news
# tuning half R@1 0.468 -> 0.465 (one question), containment 0.512 -> 0.515.
SENTENCE_WEIGHT = 0.5
BIGRAM_WEIGHT = 0.5

# Priors chosen on the news tuning half (CNN stories), kept where SQuAD lost at most 0.3 points:
# a passage that holds what the question asks for (a number for "how many", a quotation for
# "what did X say": question_kinds.py), +1 point R@1 on news;
KIND_WEIGHT = 0.2
# a neighbouring paragraph that scores too (answers and their quotes run across paragraphs),
# +1.3 points R@1 on news;
NEIGHBOUR_WEIGHT = 0.05
# a place near the top of its story (news states its facts first; 52% of the answers sit in a
# story's first three paragraphs): 0.2 / paragraph number;
POSITION_WEIGHT = 0.2
POSITION_POWER = 1.0
# the story's own evidence, the sum of its two best passages' scores (the right story ranks
# first for 70% of questions, its right paragraph for far fewer).
STORY_WEIGHT = 0.2
STORY_DEPTH = 2


class Terms(Protocol):
    """What rescoring needs from the keyword index: its words and their weights."""

    def idf(self, term: str) -> float: ...


Tokenizer = Callable[[str], list[str]]


@dataclass(frozen=True)
class Hit:
    passage_id: int
    score: float  # the score used for ranking
    dense: float  # cosine similarity of question and passage
    keyword: float  # BM25 score (0 when the passage shares no keyword with the question)
    coverage: float = 0.0  # share of the question's word weight found in the best sentence


def fuse(cosine: dict[int, float], bm25: dict[int, float]) -> dict[int, float]:
    """Each candidate's fused score: the weighted cosine plus BM25 over the best BM25.

    Every candidate must carry its cosine; one missing from `bm25` shares no keyword.
    """
    best = max(bm25.values(), default=0.0) or 1.0
    return {pid: DENSE_WEIGHT * cos + bm25.get(pid, 0.0) / best for pid, cos in cosine.items()}


def top_hits(
    cosine: dict[int, float], bm25: dict[int, float], fused: dict[int, float], k: int
) -> list[Hit]:
    """The k best fused candidates, best first (ties by id, so rankings are reproducible)."""
    ranked = sorted(fused, key=lambda pid: (-fused[pid], pid))[:k]
    return [Hit(pid, fused[pid], cosine[pid], bm25.get(pid, 0.0)) for pid in ranked]


def term_weights(question: str, tokenize: Tokenizer, terms: Terms) -> dict[str, float]:
    """The question's distinct words and their idf (a word in no passage weighs most)."""
    return {t: terms.idf(t) for t in dict.fromkeys(tokenize(question))}


def coverage(weights: dict[str, float], sentences: Iterable[str], tokenize: Tokenizer) -> float:
    """The largest share of the question's word weight that one of `sentences` holds."""
    total = sum(weights.values())
    if not total:
        return 0.0
    best = 0.0
    for sentence in sentences:
        found = weights.keys() & set(tokenize(sentence))
        best = max(best, sum(weights[t] for t in found))
    return best / total


def _bigram_share(question_terms: list[str], text_terms: list[str]) -> float:
    pairs = set(zip(question_terms, question_terms[1:], strict=False))
    if not pairs:
        return 0.0
    return len(pairs & set(zip(text_terms, text_terms[1:], strict=False))) / len(pairs)


class Located(Protocol):
    """What rescoring reads of a passage: its text, its article, its place in the article."""

    @property
    def text(self) -> str: ...
    @property
    def article_id(self) -> int: ...
    @property
    def paragraph(self) -> int: ...


def rescore(
    question: str,
    hits: list[Hit],
    passages: Mapping[int, Located],
    language: Profile,
    terms: Terms,
    k: int,
) -> list[Hit]:
    """Reorder fused hits by sentence-level and word-order evidence, the story each passage
    belongs to, and its place in that story; the top k, best first. `language` is the one the
    question is read in; what a question asks for (question_kinds.py) is read from English
    questions only."""
    tokenize = language.words
    weights = term_weights(question, tokenize, terms)
    asked = tokenize(question)
    kind = expected(question) if language.english else None
    scored = []
    for hit in hits:
        text = passages[hit.passage_id].text
        cover = coverage(weights, language.sentences(text), tokenize)
        pairs = _bigram_share(asked, tokenize(text))
        score = hit.score + SENTENCE_WEIGHT * cover + BIGRAM_WEIGHT * pairs
        if kind and supplies(text, kind, question):
            score += KIND_WEIGHT
        scored.append(replace(hit, score=score, coverage=cover))
    place = {
        (passages[h.passage_id].article_id, passages[h.passage_id].paragraph): h.score
        for h in scored
    }
    story: dict[int, list[float]] = {}
    for hit in scored:
        story.setdefault(passages[hit.passage_id].article_id, []).append(hit.score)
    story_score = {a: sum(sorted(v, reverse=True)[:STORY_DEPTH]) for a, v in story.items()}
    best_story = max(story_score.values(), default=0.0)
    out = []
    for hit in scored:
        passage = passages[hit.passage_id]
        prior = POSITION_WEIGHT / passage.paragraph**POSITION_POWER
        prior += STORY_WEIGHT * (story_score[passage.article_id] - best_story)
        near = [place.get((passage.article_id, passage.paragraph + d), 0.0) for d in (-1, 1)]
        prior += NEIGHBOUR_WEIGHT * max(near)
        out.append(replace(hit, score=hit.score + prior))
    out.sort(key=lambda h: (-h.score, h.passage_id))
    return out[:k]
