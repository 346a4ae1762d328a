"""Which sentences an answer quotes (answers/compose.py composes the answer from them): what is
read of each candidate sentence, its chance of holding the answer, and the run of sentences
worth its length; the rules that govern them are `QuoteRules` (quote_rules.py).

A sentence is read by what the words say of it (its share of the question's word weight,
whether it holds what an English question asks for), by what the model says (its cosine to the
question embedded alone and as stored with its passage), by its passage's score, and by the
same of the sentences beside it: an answer often sits next to the sentence that repeats the
question's words ("She also holds the record." after the sentence that names her).
A softmax over the candidates turns these into chances that add up to one; its weights are
data (`quote-weights.json`), fitted by `python -m tools.fit_quotes` on the training data
only. The quote is then the run of neighbouring sentences whose chances, less a cost for each
character, add up to most: a sure sentence is quoted alone, an unsure choice between two
neighbours quotes both, so that a quote is as long as the doubt, not a fixed window.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from index.answers.quote_rules import RULES, QuoteRules
from index.search.question_kinds import expected, supplies
from index.search.ranking import Hit, Terms, term_weights
from index.search.sentence_vectors import Meaning
from index.text import Analyzer, profile

__all__ = [
    "FEATURES",
    "NOT_READ_ALONE",
    "RULES",
    "WEIGHTS_FILE",
    "Evidence",
    "QuoteRules",
    "QuoteWeights",
    "across_weights",
    "best_run",
    "closeness",
    "evidence",
    "shipped",
    "table",
]

WEIGHTS_FILE = Path(__file__).with_name("quote-weights.json")

# What is read of each candidate sentence, in the order of the weights' file.
FEATURES = (
    "words",  # its share of the question's word weight (as ranking.coverage reads a sentence)
    # 1 when it holds what the question asks for: by the English rules (question_kinds.py), or
    # in another language a number the question does not hold (text/question_words.py)
    "kind",
    "passage",  # its passage's score over the best passage's
    "alone",  # its cosine embedded alone, beyond the closest's (far below when not embedded)
    "stored",  # its cosine as stored with its passage, beyond the closest's
    "read_alone",  # 1 when it was embedded alone
    "words_before",  # the same of the sentence before it in its passage (none: the least)
    "words_after",
    # the share it adds to the sentence before's (after's): an answer often completes what its
    # neighbour began (the sentence that names a treaty, then the one that gives its year)
    "adds_to_before",
    "adds_to_after",
    # the share of the question's neighbouring word pairs it holds as neighbours ("forced motion")
    "phrases",
    "alone_before",
    "alone_after",
    "stored_before",
    "stored_after",
    "most_words",  # 1 for the sentence of its passage with the most of the question's words
    "closest_stored",  # 1 for the closest sentence of its passage as stored
    "closest_alone",  # 1 for the closest sentence of its passage embedded alone
    "length",  # log of its characters
    "opens_passage",  # 1 for a passage's first sentence
)


@dataclass(frozen=True)
class Evidence:
    """Per candidate sentence (in the order of `places`), what the words and the model say."""

    places: Sequence[tuple[int, int]]  # (the passage's rank among the hits, place in it)
    lengths: Sequence[int]  # characters
    words: Sequence[float]
    kind: Sequence[float]
    passage: Sequence[float]
    alone: Sequence[float]
    stored: Sequence[float]
    read_alone: Sequence[float]
    # The share of the question's word weight it holds together with the sentence before
    # (after) it in its passage; its own share where it has no such neighbour.
    with_before: Sequence[float]
    with_after: Sequence[float]
    phrases: Sequence[float]  # the share of the question's neighbouring word pairs it holds


def table(evidence: Evidence) -> np.ndarray:
    """One row of `FEATURES` per candidate sentence."""
    columns = {
        name: np.asarray(getattr(evidence, name), dtype=np.float64)
        for name in ("words", "kind", "passage", "alone", "stored", "read_alone", "phrases")
    }
    at = {place: i for i, place in enumerate(evidence.places)}
    n = len(evidence.places)

    def beside(name: str, step: int) -> np.ndarray:
        column = columns[name]
        # A sentence with no neighbour on that side reads as the least of its kind: 0 words,
        # the farthest meaning.
        missing = 0.0 if name == "words" else float(column.min(initial=0.0))
        out = np.full(n, missing)
        for i, (rank, place) in enumerate(evidence.places):
            j = at.get((rank, place + step))
            if j is not None:
                out[i] = column[j]
        return out

    def best_in_passage(name: str) -> np.ndarray:
        # 1 for the one sentence of its passage above all the others; none where the best are
        # equal (no word in common, no stored vectors, none embedded alone): a tie says nothing.
        column = columns[name]
        out = np.zeros(n)
        members: dict[int, list[int]] = {}
        for i, (rank, _) in enumerate(evidence.places):
            members.setdefault(rank, []).append(i)
        for rows in members.values():
            values = sorted((column[i] for i in rows), reverse=True)
            if len(values) == 1 or values[0] > values[1]:
                out[max(rows, key=lambda i: column[i])] = 1.0
        return out

    made = {
        **columns,
        "words_before": beside("words", -1),
        "words_after": beside("words", 1),
        # What it adds to its neighbour's share (its own share where it has none).
        "adds_to_before": np.asarray(evidence.with_before) - beside("words", -1),
        "adds_to_after": np.asarray(evidence.with_after) - beside("words", 1),
        "alone_before": beside("alone", -1),
        "alone_after": beside("alone", 1),
        "stored_before": beside("stored", -1),
        "stored_after": beside("stored", 1),
        "most_words": best_in_passage("words"),
        "closest_stored": best_in_passage("stored"),
        "closest_alone": best_in_passage("alone"),
        "length": np.log1p(np.asarray(evidence.lengths, dtype=np.float64)),
        "opens_passage": np.array([1.0 if place == 0 else 0.0 for _, place in evidence.places]),
    }
    return np.column_stack([made[name] for name in FEATURES]) if n else np.zeros((0, len(FEATURES)))


@dataclass(frozen=True)
class QuoteWeights:
    """The fitted softmax: standardised features times weights."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def read(cls, path: Path = WEIGHTS_FILE) -> QuoteWeights:
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(
                f"{path.name} was fitted on other features than quote_choice.FEATURES; "
                "fit it again with `python -m tools.fit_quotes`."
            )
        return cls(
            np.asarray(data["weights"], dtype=np.float64),
            np.asarray(data["mean"], dtype=np.float64),
            np.asarray(data["scale"], dtype=np.float64),
        )

    def chances(self, rows: np.ndarray) -> np.ndarray:
        """Each candidate's chance of being the one that holds the answer (they add up to 1)."""
        if not len(rows):
            return np.zeros(0)
        logits = ((rows - self.mean) / self.scale) @ self.weights
        if not np.isfinite(logits).all():  # a cosine that came out NaN: no sentence is likelier
            return np.full(len(rows), 1.0 / len(rows))
        exp = np.exp(logits - logits.max())
        return exp / exp.sum()


@functools.cache
def shipped() -> QuoteWeights:
    return QuoteWeights.read()


def best_run(
    places: Sequence[tuple[int, int]],
    lengths: Sequence[int],
    chances: Sequence[float],
    length_cost: float,
    budget: int,
) -> tuple[float, list[int]]:
    """The run of neighbouring sentences of one passage (indices into `places`) whose chances
    less `length_cost` per 100 characters add up to most, within `budget` characters (one
    sentence always fits); and that sum. A sentence longer than `budget` costs `budget`'s
    characters: the chances add up to 1 at most, and counted whole, a long sentence that holds
    the answer (a legal text's, a run-on one) would be worth less than short ones that do not."""
    by_passage: dict[int, list[int]] = {}
    for i, (rank, _) in enumerate(places):
        by_passage.setdefault(rank, []).append(i)
    best_value, best = -math.inf, []
    for members in by_passage.values():
        members.sort(key=lambda i: places[i][1])
        for start in range(len(members)):
            held, length = 0.0, 0
            for stop in range(start, len(members)):
                i = members[stop]
                if stop > start and places[i][1] != places[members[stop - 1]][1] + 1:
                    break  # not neighbours in the passage
                length += lengths[i] + 1
                if stop > start and length > budget:
                    break
                held += chances[i]
                value = held - length_cost * min(length, budget) / 100
                if value > best_value:
                    best_value, best = value, members[start : stop + 1]
    return best_value, best


def across_weights(rules: QuoteRules) -> QuoteWeights:
    """The chances of a question asked in another language than the articles': its hand scores
    (the share of its word weight a sentence holds, what it asks for, the passage's score, the
    closeness in meaning) as the weights of a softmax."""
    hand = {
        "words": 1.0,
        "kind": rules.kind,
        "passage": rules.passage_prior,
        "alone": rules.across_meaning,
    }
    n = len(FEATURES)
    return QuoteWeights(
        np.array([rules.across_sharpness * hand.get(f, 0.0) for f in FEATURES]),
        np.zeros(n),
        np.ones(n),
    )


def evidence(
    question: str,
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    terms: Terms | None,
    tokenize: Analyzer,
    english: bool,
    rules: QuoteRules,
    meaning: Meaning | None,
    alone: int,
    asked_in: str,
) -> Evidence:
    """What the words and the model say of each candidate sentence (None: no meaning asked);
    `asked_in`: the language the question is written in (its question words, where the English
    rules do not apply)."""
    weights = term_weights(question, tokenize, terms) if terms else {}
    top = hits[0].score or 1.0
    cover, with_before, with_after, phrases = _words_read(question, items, weights, tokenize)
    supplied = _supplied(question, [text for _, _, text in items], english, asked_in)
    # The passage's own score is a prior: a good sentence in the best passage beats an equally
    # good one further down.
    prior = [hits[rank].score / top for rank, _, _ in items]
    close, stored, read = [0.0] * len(items), [0.0] * len(items), [0.0] * len(items)
    if meaning is not None and items and alone > 0:
        words = [
            c + rules.kind * k + rules.passage_prior * p
            for c, k, p in zip(cover, supplied, prior, strict=True)
        ]
        close, stored, read = closeness(hits, items, words, meaning, rules.stored_meaning, alone)
    return Evidence(
        places=[(rank, position) for rank, position, _ in items],
        lengths=[len(text) for _, _, text in items],
        words=cover,
        kind=supplied,
        passage=prior,
        alone=close,
        stored=stored,
        read_alone=read,
        with_before=with_before,
        with_after=with_after,
        phrases=phrases,
    )


def _supplied(question: str, texts: list[str], english: bool, asked_in: str) -> list[float]:
    """1 for each sentence that holds what the question asks for: by the English rules
    (question_kinds.py), or in another language a number the question does not hold when it
    asks how many or when, a name when it asks who or where (text/question_words.py)."""
    if english:
        kind = expected(question)
        return [1.0 if kind and supplies(text, kind, question) else 0.0 for text in texts]
    language = profile(asked_in)
    kind = language.asks_for(question)
    if kind is None:
        return [0.0] * len(texts)
    return [1.0 if language.supplies(text, kind, question) else 0.0 for text in texts]


def _words_read(
    question: str,
    items: list[tuple[int, int, str]],
    weights: dict[str, float],
    tokenize: Analyzer,
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Each sentence's share of the question's word weight, alone and together with the sentence
    before and after it; and the share of the question's neighbouring word pairs it holds."""
    total = sum(weights.values()) or 1.0
    said = [list(tokenize(text)) for _, _, text in items]
    held = [weights.keys() & set(terms) for terms in said]
    at = {(rank, place): i for i, (rank, place, _) in enumerate(items)}

    def share(found: set[str]) -> float:
        return sum(weights[t] for t in found) / total

    def joined(step: int) -> list[float]:
        out = []
        for i, (rank, place, _) in enumerate(items):
            j = at.get((rank, place + step))
            out.append(share(held[i] | held[j] if j is not None else held[i]))
        return out

    asked = list(tokenize(question))
    pairs = set(zip(asked, asked[1:], strict=False))
    phrases = [
        len(pairs & set(zip(terms, terms[1:], strict=False))) / len(pairs) if pairs else 0.0
        for terms in said
    ]
    return [share(found) for found in held], joined(-1), joined(1), phrases


# A sentence not embedded alone ranks this far below the last of those that were.
NOT_READ_ALONE = 0.5


def closeness(
    hits: list[Hit],
    items: list[tuple[int, int, str]],
    words: list[float],
    meaning: Meaning,
    stored_weight: float,
    alone: int,
) -> tuple[list[float], list[float], list[float]]:
    """Each sentence's closeness in meaning, beyond the closest's, embedded alone (the `alone`
    sentences first by their words and their stored vectors; the rest below them) and as
    stored; and 1 for those embedded alone."""
    stored = meaning.stored([(hits[rank].passage_id, place, text) for rank, place, text in items])
    known = [c for c in stored if c is not None]
    best_stored = max(known, default=0.0)
    # A sentence without a stored vector is taken as close as the closest: it is not passed
    # over for want of one.
    beyond = [(c if c is not None else best_stored) - best_stored for c in stored]
    first = [w + stored_weight * b for w, b in zip(words, beyond, strict=True)]
    picked = sorted(range(len(items)), key=lambda i: -first[i])[:alone]
    cosines = meaning.alone([items[i][2] for i in picked])
    best, floor = max(cosines), min(cosines)
    close = [floor - best - NOT_READ_ALONE] * len(items)
    read = [0.0] * len(items)
    for i, cosine in zip(picked, cosines, strict=True):
        close[i] = cosine - best
        read[i] = 1.0
    return close, beyond, read
