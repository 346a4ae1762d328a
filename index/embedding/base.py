"""What every embedder shares: batching texts by length, and vectors collected batch by batch."""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from index.embedding.calibration import Calibration

__all__ = ["SENTENCE_TOKENS", "Batch", "Embedded", "Embedder", "PendingVectors", "Progress"]

Progress = Callable[[int, int], None]
# A sentence a question embeds is read up to this many tokens (about 500 characters of English):
# a passage without a sentence's end is one "sentence" of up to 512 tokens, and a question that
# embedded three of them would wait several times as long as for three real sentences.
SENTENCE_TOKENS = 128
# A question is embedded where it is searched and again where it is read for whether it asks
# what an article is about (summaries/overview.py), and a follow-up may repeat one: the last
# few questions' vectors are kept (a fifth of a question's time, XQuAD's Chinese questions).
RECENT_QUERIES = 64
# A batch's vectors, and for each text asked with its sentences, one row per sentence (float16,
# NaN where the model could not read the sentence in the text: past its last token); None for
# a text asked without them.
Embedded = tuple[np.ndarray, list[np.ndarray | None]]


class Embedder:
    """Encodes documents and queries to L2-normalized float32 vectors.

    Subclasses tokenize (`_tokenize`) and embed one batch (`_embed`); this class orders texts
    by length and cuts them into batches under a budget of padded tokens, so that little of
    each batch is padding.
    """

    name: str
    dim: int
    max_tokens: int
    backend: str
    batch_tokens: int  # padded tokens a batch may hold
    # How retrieval reads its scores: the model's record's (registry.py), or the rules' own
    # scale for a model that has none.
    calibration: Calibration = Calibration()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens in each text untruncated, [CLS] and [SEP] included; one tokenizer call."""
        raise NotImplementedError

    def encode_documents(
        self, texts: Sequence[str], progress: Progress | None = None
    ) -> np.ndarray:
        return self.start_documents(texts).result(progress)

    def start_documents(
        self, texts: Sequence[str], sentences: Sequence[Sequence[str]] | None = None
    ) -> PendingVectors:
        """Begin embedding where the backend can work in the background; `result` waits.

        Adding several articles starts the next one before waiting for this one, so that no
        core idles while the last batch of an article runs on the other. With `sentences` (each
        text's, as its language splits it), the same pass also gives each sentence a vector
        read in its passage (`PendingVectors.sentences`), where the runtime can: the mean of
        the sentence's token states, which a sentence's quote is chosen by.
        """
        return self._start(texts, query=False, sentences=sentences)

    def encode_query(self, text: str) -> np.ndarray:
        recent: _Recent = self.__dict__.setdefault("_recent_queries", _Recent(RECENT_QUERIES))
        vector = recent.get(text)
        if vector is None:
            vector = self._start([text], query=True).result()[0]
            recent.put(text, vector)
        return vector.copy()

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several questions at once, in batches, each read as `encode_query` reads one."""
        return self._start(texts, query=True).result()

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray:
        """A few sentences a question waits on, embedded as passages, each read up to
        `SENTENCE_TOKENS` tokens: each runtime cuts them (runtimes.py); this reads them whole."""
        return self.encode_documents(texts)

    def _start(
        self,
        texts: Sequence[str],
        *,
        query: bool,
        sentences: Sequence[Sequence[str]] | None = None,
    ) -> PendingVectors:
        tokens = self._tokenize(texts, query=query, sentences=sentences)
        batches = _batches(tokens, self.batch_tokens)
        return PendingVectors(len(texts), self.dim, batches, self._submit(batches, tokens))

    def _submit(self, batches: list[list[int]], tokens: list[Any]) -> list[Batch]:
        """One handle per batch; here each batch runs when its result is asked for."""
        return [_Deferred(functools.partial(self._embed, [tokens[i] for i in b])) for b in batches]

    def _tokenize(
        self,
        texts: Sequence[str],
        *,
        query: bool,
        sentences: Sequence[Sequence[str]] | None = None,
    ) -> list[Any]:
        raise NotImplementedError

    def _embed(self, tokens: list[Any]) -> Embedded:
        raise NotImplementedError


class _Recent:
    """The vectors of the last `size` texts, by text; shared by the threads that ask."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get(text)
            if vector is not None:
                self._vectors.move_to_end(text)
            return vector

    def put(self, text: str, vector: np.ndarray) -> None:
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self._size:
                self._vectors.popitem(last=False)


class Batch(Protocol):
    """A batch's vectors on the way: a `concurrent.futures.Future`, or run on demand."""

    def result(self) -> Embedded: ...

    def cancel(self) -> bool: ...


class _Deferred:
    def __init__(self, run: Callable[[], Embedded]) -> None:
        self._run = run

    def result(self) -> Embedded:
        return self._run()

    def cancel(self) -> bool:
        return False  # runs only when asked for: there is nothing queued to drop


class PendingVectors:
    """Vectors being made, batch by batch; `result` collects them in the texts' order."""

    def __init__(self, count: int, dim: int, batches: list[list[int]], work: list[Batch]) -> None:
        self._out = np.zeros((count, dim), dtype=np.float32)
        self._sentences: list[np.ndarray | None] = [None] * count
        self._batches, self._work = batches, work

    @classmethod
    def ready(
        cls, vectors: np.ndarray, sentences: list[np.ndarray | None] | None = None
    ) -> PendingVectors:
        """Vectors already made, for an embedder that makes them all at once."""
        rows: list[np.ndarray | None] = (
            sentences if sentences is not None else [None] * len(vectors)
        )
        return cls(
            len(vectors),
            vectors.shape[1],
            [list(range(len(vectors)))],
            [_Deferred(lambda: (vectors, rows))],
        )

    def result(self, progress: Progress | None = None) -> np.ndarray:
        done = 0
        try:
            for batch, work in zip(self._batches, self._work, strict=True):
                vectors, sentences = work.result()
                self._out[batch] = vectors
                for row, rows in zip(batch, sentences, strict=True):
                    self._sentences[row] = rows
                done += len(batch)
                if progress:
                    progress(done, len(self._out))
        except BaseException:
            self.cancel()  # Ctrl-C or a failed batch: the queued rest would only delay the exit
            raise
        self._batches, self._work = [], []  # collected: a second call returns the same
        return self._out

    def sentences(self) -> list[np.ndarray | None]:
        """After `result`: each text's sentence vectors, or None where none were made."""
        return self._sentences

    def cancel(self) -> int:
        """Drop the batches not started yet; how many were dropped."""
        return sum(work.cancel() for work in self._work)


def _batches(tokens: Sequence[Sequence[object]], budget: int) -> list[list[int]]:
    """Row numbers in batches of similar length, each under `budget` tokens with padding."""
    order = sorted(range(len(tokens)), key=lambda i: len(tokens[i]))
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in order:
        # Sorted ascending, so the newest member sets the batch's padded length.
        if batch and (len(batch) + 1) * len(tokens[i]) > budget:
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches
