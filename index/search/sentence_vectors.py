"""Sentence vectors for quotes and for the judgement of whether a passage answers: made with
the collection's model on demand, at question time, and kept for the questions after.

Made at question time rather than stored at add time: a question reads the sentences of its few
best passages (15 or so), which the model embeds in milliseconds, and the best passages of a
collection recur, so most are already here; storing every sentence's vector would multiply what
an add embeds and stores by the sentences a paragraph has.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np

from index.search.interface import QueryModel

__all__ = ["SENTENCE_VECTORS", "SentenceVectors"]

# Sentences embedded for quotes, kept for the next questions: the best passages of a collection
# recur, and a sentence's vector is 1.5 kB (4,096 of them: 6 MB).
SENTENCE_VECTORS = 4096


class SentenceVectors:
    """Sentence vectors of one model, made on demand and kept for the questions after."""

    def __init__(self, size: int = SENTENCE_VECTORS) -> None:
        self.size = size
        self._model: QueryModel | None = None
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def meaning(
        self, model: QueryModel, query: np.ndarray
    ) -> Callable[[Sequence[str]], list[float]]:
        """Each text's cosine with the question `query`, on the rules' scale."""
        slope, intercept = model.calibration.cosine_scale

        def cosines(texts: Sequence[str]) -> list[float]:
            vectors = self._vectors_of(model, texts)
            return [slope * float(v @ query) + intercept for v in vectors]

        return cosines

    def _vectors_of(self, model: QueryModel, texts: Sequence[str]) -> list[np.ndarray]:
        # One lock around the work: two questions at once would embed the same sentences twice.
        with self._lock:
            if model is not self._model:  # re-embedded with another model: start again
                self._model, self._vectors = model, OrderedDict()
            missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
            if missing:
                self._vectors.update(zip(missing, model.encode_documents(missing), strict=True))
            out = [self._vectors[t] for t in texts]
            for text in texts:
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
            return out
