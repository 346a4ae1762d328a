"""The evidence the judgement of declines is fitted on (tools/fit_declines.py): each set's
questions asked through the real retrieval, as `articlebot eval --abstention` (or, for a set
marked `=whole`, `--leave-one-out`) asks them, each row kept with what it should be and the part
of its article (`index/ops/eval_split.py`), in one .npz file that a later fit reads again.

A SET is `FILE[@DATA_DIR][:START:STOP][+QUESTIONS_FROM][=train][=whole]` (START:STOP: articles
by position; QUESTIONS_FROM: the questions as worded in another file of the same ids; `=train`:
every question fits; `=whole`: every article indexed).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from index.library import Library
from index.ops import evaluate as ev
from index.ops.eval_split import PARTS, SEED, SHARES, parts
from index.search.relevance import Evidence
from index.settings import model_cache

__all__ = [
    "CHOOSE",
    "FIELDS",
    "FIT",
    "REPORT",
    "Asked",
    "Set",
    "feature_rows",
    "kept_or_asked",
    "parse",
]

# The evidence kept for each question, as `Evidence` holds it: features are made from it at
# fitting time, so that a change of features made from the same fields needs no asking again
# (a new field does: `--reuse` refuses evidence kept without it).
FIELDS = tuple(f.name for f in dataclasses.fields(Evidence))
QUESTIONS_PER_SET = 800
FIT, CHOOSE, REPORT = (PARTS.index(p) for p in PARTS)
# The split the kept parts were drawn by: evidence kept under another is asked again.
_SPLIT = [float(SEED), *(SHARES[p] for p in PARTS)]


@dataclass(frozen=True)
class Set:
    name: str
    file: str
    data_dir: Path
    articles: tuple[int, int] | None
    questions_from: str | None
    train: bool
    whole: bool = False


@dataclass(frozen=True)
class Asked:
    """One set's kept evidence: a row per question."""

    raw: np.ndarray  # the `Evidence` fields, NaN where there is none
    labels: np.ndarray  # 1: should answer
    part: np.ndarray  # FIT, CHOOSE or REPORT
    titles: np.ndarray  # the title of the question's article
    across: bool  # most questions are in another language than the articles
    train: bool  # every question fits


def parse(spec: str) -> Set:
    spec, *marks = spec.split("=")
    if set(marks) - {"train", "whole"}:
        raise SystemExit(f"{spec}: a set is marked =train or =whole, not ={'='.join(marks)}")
    train, whole = "train" in marks, "whole" in marks
    spec, _, questions_from = spec.partition("+")
    span = None
    if spec.count(":") == 2:
        spec, start, stop = spec.rsplit(":", 2)
        span = (int(start), int(stop))
    file, _, data_dir = spec.partition("@")
    name = Path(file).stem + (f"+{Path(questions_from).stem}" if questions_from else "")
    if span:
        name += f"[{span[0]}:{span[1]}]"
    if whole:
        name += "/whole"
    if train:
        # In the name, so that evidence kept as fitting only is never read back as a set
        # whose questions choose or report.
        name += "/train"
    return Set(name, file, Path(data_dir or "data"), span, questions_from or None, train, whole)


def gather(one: Set) -> Asked:
    """Each question's evidence and what it should be, for one set."""
    dataset = ev.load_squad(one.file)
    # The parts are the whole file's, drawn before any span is cut from it.
    part_of = parts([a.title for a in dataset.articles])
    if one.questions_from:
        dataset = dataset.asked_as(ev.load_squad(one.questions_from))
    if one.articles:
        positions = range(len(dataset.articles))[one.articles[0] : one.articles[1]]
        part_of = [part_of[i] for i in positions]
        dataset = dataset.subset(positions)
    the_plan = ev.plan(
        dataset,
        abstention=not one.whole,
        leave_one_out=one.whole,
        questions=QUESTIONS_PER_SET // 2 if one.whole else QUESTIONS_PER_SET,
        seed=0,
    )
    library = Library(one.data_dir, model_cache=model_cache(os.environ))
    collection = library.collection(ev.default_collection(one.file, one.articles, not one.whole))
    ids = ev.build(collection, the_plan.indexed, None)
    # A question asked without its own article stands for one about an article the collection
    # lacks: it is read at the whole collection's size, not the size of the scope that leaves
    # the article out, which would tell the two kinds apart by their size alone.
    whole_size = len(collection.retriever.backend.keywords())
    scopes = the_plan.scopes(ids)
    rows, labels, part, titles, foreign = [], [], [], [], []
    asked = [(q, 1) for q in the_plan.answer] + [(q, 0) for q in the_plan.decline]
    for (q, should), scope in zip(asked, scopes, strict=True):
        found = collection.retriever.retrieve(" ".join(q.question.split()), 5, scope)
        if found.evidence is None:
            continue
        evidence = found.evidence
        if one.whole:
            evidence = dataclasses.replace(evidence, passages=whole_size)
        rows.append([_number(getattr(evidence, f)) for f in FIELDS])
        labels.append(should)
        part.append(FIT if one.train else PARTS.index(part_of[q.article]))
        titles.append(dataset.articles[q.article].title)
        foreign.append(not found.evidence.native)
    across = sum(foreign) > len(foreign) / 2
    return Asked(
        np.array(rows), np.array(labels), np.array(part), np.array(titles), across, one.train
    )


def _number(value: object) -> float:
    return np.nan if value is None else float(value)  # type: ignore[arg-type]


def feature_rows(raw: np.ndarray) -> np.ndarray:
    """The judgement's features of each question's kept evidence."""
    kinds = {f.name: f.type for f in dataclasses.fields(Evidence)}
    rows = []
    for values in raw:
        given: dict[str, object] = {
            f: (
                bool(v)
                if kinds[f] in ("bool", bool)
                else int(v)
                if kinds[f] in ("int", int)
                else float(v)
            )
            for f, v in zip(FIELDS, values, strict=True)
        }
        given.update({f: None for f, v in zip(FIELDS, values, strict=True) if np.isnan(v)})
        rows.append(Evidence(**given).features())  # type: ignore[arg-type]
    return np.array(rows)


def kept_or_asked(sets: list[Set], features: Path, reuse: bool) -> dict[str, Asked]:
    """Each set's evidence: read from `features` with `reuse`, asked (and kept) otherwise."""
    names = [s.name for s in sets]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SystemExit(f"Two sets are named {twice[0]}; give each file once in a fit.")
    kept: dict[str, np.ndarray] = {}
    if reuse and features.exists():
        kept = dict(np.load(features, allow_pickle=False))
        stale = [k for k, v in kept.items() if k.endswith("/x") and v.shape[1] != len(FIELDS)]
        split = [k for k, v in kept.items() if k.endswith("/split") and list(v) != _SPLIT]
        parted = {k.rsplit("/", 1)[0] for k in kept if k.endswith("/split")}
        unparted = {k.rsplit("/", 1)[0] for k in kept if k.endswith("/x")} - parted
        if stale or split or unparted:
            raise SystemExit(
                f"{features} keeps evidence of other fields or parts than this fit reads; "
                "fit without --reuse to ask its sets again."
            )
    data = {
        s.name: Asked(
            kept[f"{s.name}/x"],
            kept[f"{s.name}/y"],
            kept[f"{s.name}/part"],
            kept[f"{s.name}/title"],
            bool(kept[f"{s.name}/across"]),
            s.train,
        )
        for s in sets
        if f"{s.name}/x" in kept
    }
    if all(s.name in data for s in sets):
        return data
    for s in sets:
        if s.name not in data:
            print(f"asking {s.name}", file=sys.stderr, flush=True)
            data[s.name] = gather(s)
    asked = {
        f"{k}/{field}": value
        for k, a in data.items()
        for field, value in (
            ("x", a.raw),
            ("y", a.labels),
            ("part", a.part),
            ("title", a.titles),
            ("across", np.array(a.across)),
            ("split", np.array(_SPLIT)),
        )
    }
    arrays: dict[str, Any] = kept | asked  # the sets kept before, and these
    np.savez(features, **arrays)
    return data
