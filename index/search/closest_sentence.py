"""A question in another language than the articles': its best passages ranked by their
closest sentence too (retrieval.py calls it on the fused order)."""

from __future__ import annotations

import dataclasses

import numpy as np

from index.records import Passage
from index.search.interface import QueryModel
from index.search.ranking import DENSE_WEIGHT, Hit
from index.search.sentence_vectors import SentenceVectors
from index.text import profile

__all__ = ["BY_SENTENCE", "SENTENCE_SHARE", "by_sentence"]

# A question in another language than the articles' ranks its best few passages by their closest
# sentence, each embedded alone, as much as by the passage's own cosine: a passage's vector
# blurs a sentence that answers among others, and across languages no word says which it is.
# `SENTENCE_SHARE` of the cosine is the closest sentence's, chosen on XQuAD's choose part
# (English articles; Chinese / Arabic / Russian questions; R@1 and a gold answer in the
# answer), the fused order as it was -> 0.5, 0.7, 1.0 of it, the best 4 read so: Chinese
# 0.788 / 0.587 -> 0.851 / 0.647, 0.866 / 0.651, 0.848 / 0.636; Arabic 0.706 / 0.513 -> 0.773 /
# 0.595, 0.788 / 0.602, 0.807 / 0.632; Russian 0.836 / 0.651 -> 0.896 / 0.710, 0.896 / 0.710,
# 0.877 / 0.703. On the report part, which nothing chose: Chinese 0.711 / 0.554 -> 0.786 /
# 0.593, Arabic 0.689 / 0.532 -> 0.754 / 0.561, Russian 0.825 / 0.629 -> 0.832 / 0.682. The
# sentences as stored with their passage, which know their neighbours, moved R@1 within an
# article a point at most. Embedding costs about 20 ms a sentence, kept for the questions
# after, so only the `BY_SENTENCE` best are read so (6 rather than 4: within half a point).
SENTENCE_SHARE = 0.7
BY_SENTENCE = 4
# A passage that holds what the question asks for (`Profile.asks_for`: a number for "how
# many", a name for "who" or "where", read from the question's own language) is lifted by
# this much, as English questions' passages are by ranking.py's `KIND_WEIGHT`. Wikipedia's
# paragraphs nearly all hold numbers and names: on XQuAD's choose part (English articles,
# questions in German, Russian, Chinese, Arabic, Greek, Turkish, Vietnamese) R@1 moved by one
# question at most at 0.05, 0.1 and 0.2. A news story or a notice has paragraphs without
# them: the demo article's "who led the project?", asked in 18 languages, quoted the paragraph
# of how many tools it started with (tools/bench/small_server.py, answered 0.681 -> 0.708).
KIND_ACROSS = 0.1


def by_sentence(
    hits: list[Hit],
    passages: dict[int, Passage],
    query: np.ndarray,
    scale: tuple[float, float],
    model: QueryModel,
    languages: dict[str, int],
    sentences: SentenceVectors,
    question: str,
    asked_in: str,
) -> list[Hit]:
    """The hits, the best `BY_SENTENCE` of them scored as if `SENTENCE_SHARE` of each one's
    cosine were its closest sentence's (`query` as searched, cosines on `scale`), and lifted by
    `KIND_ACROSS` where one of its sentences holds what `question` (written in `asked_in`)
    asks for, then ranked again; each keeps its passage's own cosine (`dense`)."""
    if len(hits) < 2:
        return hits
    written_in = max(sorted(languages), key=languages.__getitem__) if languages else None
    split = profile(written_in).sentences
    slope, intercept = scale
    best, rest = hits[:BY_SENTENCE], hits[BY_SENTENCE:]
    asking = profile(asked_in)
    kind = asking.asks_for(question)
    rescored = []
    for hit in best:
        text = passages[hit.passage_id].text
        read = split(text) or [text]
        closest = slope * sentences.closest(model, query, read) + intercept
        score = hit.score + DENSE_WEIGHT * SENTENCE_SHARE * (closest - hit.dense)
        if kind is not None and any(asking.supplies(s, kind, question) for s in read):
            score += KIND_ACROSS
        rescored.append(dataclasses.replace(hit, score=score))
    rescored.sort(key=lambda h: (-h.score, h.passage_id))
    return rescored + rest
