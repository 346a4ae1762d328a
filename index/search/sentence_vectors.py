"""How close in meaning the sentences a quote is chosen from come to the question, read two ways.

- As stored: each sentence's vector read in its passage's one pass at add time ("late
  chunking", storage/sentence_rows.py), free at question time. It knows the sentences around
  it, and so tells a passage's sentences apart less well than each read alone: quotes chosen
  by it alone held a gold answer less often (English articles, Chinese questions 0.557 -> 0.487).
- Alone: the sentence embedded by itself, at question time, as the model reads a passage; the
  best signal, and the costly one (about 20 ms a sentence on one core), so it is asked only of
  the few sentences the stored reading and the words put first (answers/compose.py), and kept
  for the questions after (the best passages of a collection recur).
"""

from __future__ import annotations

import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from index.search.interface import QueryModel

__all__ = ["SENTENCE_VECTORS", "Meaning", "SentenceVectors"]

# Sentences embedded for quotes, kept for the next questions: the best passages of a collection
# recur, and a sentence's vector is 1.5 kB (4,096 of them: 6 MB).
SENTENCE_VECTORS = 4096


@dataclass(frozen=True)
class Meaning:
    """One question's closeness in meaning to sentences, as cosines on the rules' scale.

    `stored`: for sentences given as (passage id, place among the passage's sentences, text),
    each one's cosine as stored with its passage, or None where none was (a passage stored
    before sentence vectors were, or split otherwise since). `alone`: each text's cosine,
    embedded alone."""

    stored: Callable[[Sequence[tuple[int, int, str]]], list[float | None]]
    alone: Callable[[Sequence[str]], list[float]]


class SentenceVectors:
    """Sentence vectors of one model, made on demand and kept for the questions after."""

    def __init__(self, size: int = SENTENCE_VECTORS) -> None:
        self.size = size
        self._model: QueryModel | None = None
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def meaning(
        self,
        model: QueryModel,
        query: np.ndarray,
        stored: Callable[[list[int]], dict[int, np.ndarray]],
    ) -> Meaning:
        """The question `query`'s closeness to sentences; `stored` reads passages' sentence
        vectors. A passage's stored rows are read only when they are as many as the sentences
        asked of it (its whole passage, split as at add time)."""
        slope, intercept = model.calibration.cosine_scale

        def as_stored(sentences: Sequence[tuple[int, int, str]]) -> list[float | None]:
            counts = Counter(passage for passage, _, _ in sentences)
            found = stored(sorted(counts))
            out: list[float | None] = []
            for passage, place, _ in sentences:
                rows = found.get(passage)
                if rows is None or len(rows) != counts[passage] or np.isnan(rows[place][0]):
                    out.append(None)
                else:
                    out.append(slope * float(rows[place] @ query) + intercept)
            return out

        def alone(texts: Sequence[str]) -> list[float]:
            vectors = self._vectors_of(model, texts)
            return [slope * float(v @ query) + intercept for v in vectors]

        return Meaning(as_stored, alone)

    def _vectors_of(self, model: QueryModel, texts: Sequence[str]) -> list[np.ndarray]:
        # One lock around the work: two questions at once would embed the same sentences twice.
        with self._lock:
            if model is not self._model:  # re-embedded with another model: start again
                self._model, self._vectors = model, OrderedDict()
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                self._vectors.update(zip(missing, model.encode_sentences(missing), strict=True))
            out = [self._vectors[t] for t in texts]
            for text in texts:
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
            return out
