"""What travels from the mining (reader_mine.py) to a training machine: the pairs and the
evaluation questions as e5's token ids, in files that numpy alone reads.

- `pairs.npz`: every distinct question and passage as token ids (flat int32 arrays with
  offsets: e5's 250,002 ids need more than 16 bits), and each group (question, positive,
  negatives, others) as indexes into them.
- `eval-STEM.npz`: reader_eval.candidates' questions with the rules' passages of each, as token
  ids, so that a machine without the retrieval judges a reader on them.

A pair is read as XLM-R reads two texts, `<s> question </s></s> passage </s>`, cut to
`MAX_TOKENS` by cutting the passage (the question is cut to `QUESTION_TOKENS` when tokenized).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tools.reader_pairs import HARD_NEGATIVES, OTHER_POOL

__all__ = [
    "BOS",
    "EOS",
    "MANIFEST_FILE",
    "MAX_TOKENS",
    "PAD",
    "PAIRS_FILE",
    "QUESTION_TOKENS",
    "START_FILE",
    "UNK",
    "Packed",
    "Tokenizer",
    "load_eval",
    "load_packed",
    "pack",
    "pair_ids",
    "write_eval",
]

# Question and passage together are cut to this many tokens, the question first to this many.
MAX_TOKENS = 256
QUESTION_TOKENS = 64
# XLM-R's special ids (e5's SentencePiece model keeps fairseq's order).
BOS, PAD, EOS, UNK = 0, 1, 2, 3
# The files that travel (the starting weights, e5-start.npz, are reader_mine.write_start's).
PAIRS_FILE = "pairs.npz"
START_FILE = "e5-start.npz"
MANIFEST_FILE = "manifest.json"


class Tokenizer(Protocol):
    """What writes the files: questions and passages as ids, and the tokenizer's id
    (reader_mine.Tokens)."""

    id: str

    def questions(self, texts: list[str]) -> list[list[int]]: ...

    def passages(self, texts: list[str]) -> list[list[int]]: ...


def pair_ids(
    question: Sequence[int] | np.ndarray, passage: Sequence[int] | np.ndarray
) -> np.ndarray:
    """One pair's input ids as XLM-R reads two texts, the passage cut to fit `MAX_TOKENS`."""
    room = MAX_TOKENS - 4 - len(question)
    return np.concatenate([[BOS], question, [EOS, EOS], np.asarray(passage)[:room], [EOS]]).astype(
        np.int64
    )


@dataclass(frozen=True)
class Packed:
    """The mined groups, as token ids: `questions[i]` and `passages[j]` are id arrays; each
    group is a question, its positive, its negatives and its others (-1 where fewer)."""

    questions: list[np.ndarray]
    passages: list[np.ndarray]
    group_question: np.ndarray  # [G]
    group_positive: np.ndarray  # [G]
    group_negatives: np.ndarray  # [G, HARD_NEGATIVES]
    group_others: np.ndarray  # [G, OTHER_POOL]
    tokenizer: str

    def __len__(self) -> int:
        return len(self.group_question)

    def group(self, g: int) -> list[tuple[np.ndarray, float]]:
        """Group g's pairs (input ids, label): the positive first, then its own pool's
        negatives, then the others."""
        q = self.questions[int(self.group_question[g])]
        out = [(pair_ids(q, self.passages[int(self.group_positive[g])]), 1.0)]
        for p in (*self.group_negatives[g], *self.group_others[g]):
            if p >= 0:
                out.append((pair_ids(q, self.passages[int(p)]), 0.0))
        return out

    def negatives(self, g: int) -> int:
        return int((self.group_negatives[g] >= 0).sum())

    def word_ids(self) -> np.ndarray:
        """The token ids the pairs use, the special ones included, sorted."""
        used = [np.arange(4)] + self.questions + self.passages
        return np.unique(np.concatenate(used)).astype(np.int32)


def _flat(arrays: Iterable[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    arrays = list(arrays)
    offsets = np.zeros(len(arrays) + 1, np.int64)
    offsets[1:] = np.cumsum([len(a) for a in arrays])
    flat = np.fromiter((t for a in arrays for t in a), np.int32, int(offsets[-1]))
    return flat, offsets


def _unflat(flat: np.ndarray, offsets: np.ndarray) -> list[np.ndarray]:
    return [flat[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def pack(groups: Sequence[Any], tokens: Tokenizer, out: Path) -> Packed:
    """Write `groups` (reader_pairs.Group) as `pairs.npz` under `out`; what was written."""
    questions: dict[str, int] = {}
    passages: dict[str, int] = {}

    def index(table: dict[str, int], text: str) -> int:
        return table.setdefault(text, len(table))

    rows = []
    for g in groups:
        q = index(questions, g.question)
        pos = index(passages, g.positive)
        neg = [index(passages, t) for t in g.negatives[:HARD_NEGATIVES]]
        oth = [index(passages, t) for t in g.others[:OTHER_POOL]]
        rows.append(
            (q, pos, neg + [-1] * (HARD_NEGATIVES - len(neg)), oth + [-1] * (OTHER_POOL - len(oth)))
        )
    q_flat, q_off = _flat(tokens.questions(list(questions)))
    p_flat, p_off = _flat(tokens.passages(list(passages)))
    arrays = {
        "question_tokens": q_flat,
        "question_offsets": q_off,
        "passage_tokens": p_flat,
        "passage_offsets": p_off,
        "group_question": np.array([r[0] for r in rows], np.int32),
        "group_positive": np.array([r[1] for r in rows], np.int32),
        "group_negatives": np.array([r[2] for r in rows], np.int32).reshape(-1, HARD_NEGATIVES),
        "group_others": np.array([r[3] for r in rows], np.int32).reshape(-1, OTHER_POOL),
        "tokenizer": np.array(tokens.id),
    }
    out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out / PAIRS_FILE, **arrays)  # type: ignore[arg-type]
    return load_packed(out)


def load_packed(folder: Path) -> Packed:
    with np.load(folder / PAIRS_FILE) as f:
        return Packed(
            questions=_unflat(f["question_tokens"], f["question_offsets"]),
            passages=_unflat(f["passage_tokens"], f["passage_offsets"]),
            group_question=f["group_question"],
            group_positive=f["group_positive"],
            group_negatives=f["group_negatives"],
            group_others=f["group_others"],
            tokenizer=str(f["tokenizer"]),
        )


def write_eval(asked: list[dict[str, Any]], tokens: Tokenizer, path: Path) -> None:
    """reader_eval.candidates' questions with their passages as e5's token ids: what a reader
    is judged on (reader_eval.judge) where the retrieval does not run."""
    passages: dict[str, int] = {}
    parts = ("full", "half", "others")
    for q in asked:
        for part in parts:
            q[part]["passages"] = [passages.setdefault(t, len(passages)) for t in q[part]["texts"]]
    q_flat, q_off = _flat(tokens.questions([q["question"] for q in asked]))
    p_flat, p_off = _flat(tokens.passages(list(passages)))
    plain = [
        {**q, **{part: {k: v for k, v in q[part].items() if k != "texts"} for part in parts}}
        for q in asked
    ]
    np.savez_compressed(
        path,
        question_tokens=q_flat,
        question_offsets=q_off,
        passage_tokens=p_flat,
        passage_offsets=p_off,
        asked=np.array(json.dumps(plain)),
        tokenizer=np.array(tokens.id),
    )


def load_eval(path: Path) -> tuple[list[dict[str, Any]], list[np.ndarray], list[np.ndarray]]:
    """`write_eval`'s questions (each part's "passages" indexes into the passages' ids), the
    questions' ids and the passages' ids."""
    with np.load(path) as f:
        asked = json.loads(str(f["asked"]))
        questions = _unflat(f["question_tokens"], f["question_offsets"])
        passages = _unflat(f["passage_tokens"], f["passage_offsets"])
    return asked, questions, passages
