"""A summary: 2 to 5 of an article's own sentences, verbatim, in its order.

Chosen as news is written and read: its point comes first (lead-3, the first three sentences,
is the baseline unsupervised summarisers rarely beat on news), so a sentence's place weighs
most; then how close it comes in meaning to the whole article (the mean of its passages'
vectors: what the rest keeps returning to), and how many of the title's words it holds (a hint:
some titles are generic). Sentences are taken best first, each losing what it repeats of those
already taken (maximal marginal relevance), until the summary holds about as many words as a
person's summary of a news story does.

The work is bounded whatever the article's length: only the first `candidates` sentences are
candidates, only the first `centroid_passages` passages make the mean, and a candidate is
compared with the few sentences chosen, never with every other.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from index.records import SummarySentence
from index.summaries.rules import RULES, SummaryRules
from index.text import UNSPACED, analyze, profile

__all__ = ["ArticleText", "one_line", "render", "summarize", "words"]


@dataclass(frozen=True)
class ArticleText:
    """What a summary is chosen from: an article's passages in order, their vectors, and each
    passage's sentence vectors (one row per sentence as its language splits it, NaN where the
    model did not read one; None where none were made)."""

    title: str
    language: str | None
    passages: Sequence[tuple[int, str]]  # (paragraph, text)
    vectors: np.ndarray | None = None  # one unit row per passage
    sentence_rows: Sequence[np.ndarray | None] = field(default_factory=list)


@dataclass(frozen=True)
class _Candidate:
    index: int  # the sentence's place in the article
    paragraph: int
    text: str
    vector: np.ndarray | None
    words: float


def words(text: str) -> float:
    """How long a text reads, in words of a spaced script: a letter of an unspaced script (Han,
    kana, Thai) counts as half a word, any other character as a sixth of one."""
    unspaced = len(UNSPACED.findall(text))
    return unspaced / 2 + (len(text) - unspaced) / 6


def _candidates(article: ArticleText, rules: SummaryRules) -> list[_Candidate]:
    language = profile(article.language)
    out: list[_Candidate] = []
    for n, (paragraph, text) in enumerate(article.passages):
        sentences = language.sentences(text)
        rows = article.sentence_rows[n] if n < len(article.sentence_rows) else None
        if rows is not None and len(rows) != len(sentences):
            rows = None  # split otherwise than when they were made: read the passage's
        for i, sentence in enumerate(sentences):
            vector = rows[i] if rows is not None else None
            if vector is not None and not np.all(np.isfinite(vector)):
                vector = None
            if vector is None and article.vectors is not None and n < len(article.vectors):
                vector = article.vectors[n]
            out.append(_Candidate(len(out), paragraph, sentence, vector, words(sentence)))
            if len(out) >= rules.candidates:
                return out
    return out


def _statements(found: list[_Candidate], rules: SummaryRules) -> list[_Candidate]:
    """The candidates that read as statements: long enough, not a heading or a credit, with
    letters in them; all of them where fewer than two would be left."""
    kept = [
        c
        for c in found
        if rules.least_words <= c.words <= rules.most_words and any(ch.isalpha() for ch in c.text)
    ]
    return kept if len(kept) >= min(2, len(found)) else found


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _centrality(article: ArticleText, found: list[_Candidate], rules: SummaryRules) -> np.ndarray:
    """Each candidate's cosine with the article's mean passage vector, in standard deviations
    from the candidates' mean (a model's cosines sit in a narrow band of its own)."""
    if article.vectors is None or not len(article.vectors):
        return np.zeros(len(found))
    mean = _unit(np.asarray(article.vectors[: rules.centroid_passages], dtype=np.float32).mean(0))
    cosines = np.array(
        [float(_unit(c.vector) @ mean) if c.vector is not None else 0.0 for c in found]
    )
    spread = float(cosines.std())
    return (cosines - cosines.mean()) / spread if spread > 1e-6 else np.zeros(len(found))


def _title_share(article: ArticleText, found: list[_Candidate]) -> np.ndarray:
    terms = set(analyze(article.title, article.language))
    if not terms:
        return np.zeros(len(found))
    return np.array(
        [len(terms & set(analyze(c.text, article.language))) / len(terms) for c in found]
    )


def summarize(
    article: ArticleText, rules: SummaryRules = RULES, *, sentences: int | None = None
) -> list[SummarySentence]:
    """The article's summary: its sentences worth most, in its order; `sentences` of them
    where asked (at most `rules.most_sentences` otherwise, fewer for a short article)."""
    found = _statements(_candidates(article, rules), rules)
    if not found:
        return []
    worth = (
        np.array([math.exp(-c.index / rules.position_scale) for c in found])
        + rules.centrality * _centrality(article, found, rules)
        + rules.title * _title_share(article, found)
    )
    units = [_unit(c.vector) if c.vector is not None else None for c in found]
    terms = [set(analyze(c.text, article.language)) for c in found]
    wanted = sentences if sentences is not None else rules.most_sentences
    chosen: list[int] = []
    length = 0.0
    while len(chosen) < min(wanted, len(found)):
        best, best_value = -1, -math.inf
        for i in range(len(found)):
            if i in chosen or _said(terms, i, chosen, rules.repeated_words):
                continue
            value = float(worth[i]) - rules.redundancy * _repeats(units, i, chosen, rules)
            if value > best_value:
                best, best_value = i, value
        if best < 0:  # every candidate left says again what is chosen
            break
        full = length + found[best].words > rules.budget_words
        if sentences is None and len(chosen) >= rules.least_sentences and full:
            break
        chosen.append(best)
        length += found[best].words
    return [
        SummarySentence(found[i].paragraph, found[i].text)
        for i in sorted(chosen, key=lambda i: found[i].index)
    ]


def _said(terms: list[set[str]], i: int, chosen: list[int], share: float) -> bool:
    """Whether candidate `i`'s words are mostly those of a sentence already chosen."""
    mine = terms[i]
    if not mine:
        return False
    return any(len(mine & terms[j]) >= share * min(len(mine), len(terms[j])) for j in chosen)


def _repeats(
    units: list[np.ndarray | None], i: int, chosen: list[int], rules: SummaryRules
) -> float:
    """How much of a sentence already chosen candidate `i` says again: 0 up to
    `redundant_from` cosine, 1 at the same meaning."""
    mine = units[i]
    others = [u for j in chosen if (u := units[j]) is not None]
    if mine is None or not others:
        return 0.0
    closest = max(float(mine @ u) for u in others)
    over = (closest - rules.redundant_from) / max(1e-6, 1.0 - rules.redundant_from)
    return max(0.0, over)


def render(sentences: Sequence[SummarySentence], language: str | None) -> str:
    """The summary as a member reads it: its sentences joined as text of its script is (with
    nothing between sentences of Chinese or Japanese, a space elsewhere)."""
    parts = [s.text for s in sentences]
    # Chinese and Japanese sentences follow one another with no space between them.
    return ("" if profile(language).script == "CJK" else " ").join(parts)


def one_line(sentences: Sequence[SummarySentence], language: str | None, limit: int = 280) -> str:
    """The summary's first sentence, and the second too where both fit in `limit` characters:
    what a digest or a feed's announcement shows of an article."""
    shown: list[SummarySentence] = []
    for sentence in sentences[:2]:
        if shown and len(render([*shown, sentence], language)) > limit:
            break
        shown.append(sentence)
    text = render(shown, language)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
