"""How close in meaning the sentences a quote is chosen from come to the question, read two ways.

- As stored: each sentence's vector read in its passage's one pass at add time ("late
  chunking", storage/sentence_rows.py), free at question time. It knows the sentences around
  it, and so tells a passage's sentences apart less well than each read alone: quotes chosen
  by it alone held a gold answer less often (English articles, Chinese questions 0.557 -> 0.487).
- Alone: the sentence embedded by itself, at question time, as the model reads a passage; the
  best signal, and the costly one (about 20 ms a sentence on one core), so it is asked only of
  the few sentences the stored reading and the words put first (answers/quote_choice.py), and kept
  for the questions after (the best passages of a collection recur).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from index.search.interface import QueryModel
from index.storage.sentence_rows import Stored, split_of

__all__ = ["SENTENCE_VECTORS", "Meaning", "SentenceVectors"]

# Sentences embedded for quotes, kept for the next questions: the best passages of a collection
# recur, and a sentence's vector is 1.5 kB (4,096 of them: 6 MB).
SENTENCE_VECTORS = 4096


@dataclass(frozen=True)
class Meaning:
    """One question's closeness in meaning to sentences, as cosines on the rules' scale.

    `stored`: for sentences given as (passage id, place among the passage's sentences, text),
    each one's cosine as stored with its passage, or None where none was (a passage stored
    before sentence vectors were, or split otherwise since: by another release's rule, or in a
    language identified since). `alone`: each text's cosine,
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
        stored: Callable[[list[int]], dict[int, Stored]],
    ) -> Meaning:
        """The question `query`'s closeness to sentences; `stored` reads passages' sentence
        vectors. A passage's stored rows are read only for the split they were made for: the
        sentences asked of it, all of them, in order."""
        slope, intercept = model.calibration.cosine_scale

        def as_stored(sentences: Sequence[tuple[int, int, str]]) -> list[float | None]:
            split: dict[int, list[tuple[int, str]]] = defaultdict(list)
            for passage, place, text in sentences:
                split[passage].append((place, text))
            found = stored(sorted(split))
            usable = {
                passage: rows.vectors
                for passage, rows in found.items()
                if rows.split == split_of([text for _, text in sorted(split[passage])])
                and len(rows.vectors) == len(split[passage])
            }
            out: list[float | None] = []
            for passage, place, _ in sentences:
                rows = usable.get(passage)
                if rows is None or np.isnan(rows[place][0]):
                    out.append(None)
                else:
                    out.append(slope * float(rows[place] @ query) + intercept)
            return out

        def alone(texts: Sequence[str]) -> list[float]:
            vectors = self._vectors_of(model, texts)
            return [slope * float(v @ query) + intercept for v in vectors]

        return Meaning(as_stored, alone)

    def closest(self, model: QueryModel, query: np.ndarray, texts: Sequence[str]) -> float:
        """The highest cosine of `query` with any of `texts`, each embedded alone (and kept)."""
        return max(float(v @ query) for v in self._vectors_of(model, texts))

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
