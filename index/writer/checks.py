"""What a written answer must pass before it is shown; the first check it fails says why.

In order: it fits the answer's limits, pings no one and links nowhere; every `[n]` names a
passage it was given and every sentence carries one; every quoted span is a verbatim slice of
a passage it cites; every number and name is in a passage it cites; and each sentence is
close in meaning, under the collection's sentence vectors, to a sentence of a passage it cites
that is not an instruction planted in the article (meaning.json holds each model's floors).

The patterns read text a model wrote from articles members added: each is possessive or
bounded, so that none can backtrack (tests/writer/test_checks.py tries every shape).
"""

from __future__ import annotations

import functools
import json
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import regex

from index.text import identify, normalize, profile
from index.writer.seam import Draft, Source

__all__ = ["ANSWER_CHARS", "Floors", "SentenceModel", "Verdict", "check", "floors_for"]

HERE = Path(__file__).resolve().parent
# A written answer as long as this at most: an embed holds it with its sources.
ANSWER_CHARS = 1_500
MAX_SENTENCES = 8

_MENTION = regex.compile(r"@(?:everyone|here)\b|<@[!&]?+\d{1,25}+>|<#\d{1,25}+>", regex.I)
_LINK = regex.compile(r"https?+://|\bwww\.|\]\(|\bdiscord\.gg/|\bdiscord(?:app)?+\.com/", regex.I)
# Quoted spans, by their marks: “…” „…“ «…» »…« 「…」 『…』 ‹…› "…" (a lone ' is an apostrophe).
_QUOTED = regex.compile(
    r"“([^“”]{1,600}+)”|„([^„“”]{1,600}+)[“”]|«([^«»]{1,600}+)»|»([^«»]{1,600}+)«"
    r"|「([^「」]{1,600}+)」|『([^『』]{1,600}+)』|‹([^‹›]{1,600}+)›|\"([^\"]{1,600}+)\""
)
_ELLIPSIS = regex.compile(r"…|\.\.\.")
_NUMBER = regex.compile(r"\d++(?:[.,]\d++)*+")
_WORD = regex.compile(r"[\p{L}\p{M}][-\p{L}\p{M}'’]{0,60}+")
_EDGES = " \t\n.,;:!?'’\"“”«»「」『』()"


class SentenceModel(Protocol):
    """What the meaning check needs of the collection's embedder."""

    name: str

    def encode_sentences(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class Floors:
    supported: float  # the least cosine to a sentence of a cited passage
    instruction: float  # a passage's sentence this close to an instruction supports nothing


@dataclass(frozen=True)
class Verdict:
    """A draft that passed (`text` to show, and for each passage cited, the sentences that
    support it), or the first check it failed (`problem`, `kind`)."""

    text: str = ""
    support: dict[int, list[str]] = field(default_factory=dict)
    problem: str | None = None
    kind: str = "written"


@functools.cache
def _floors_file() -> dict[str, Floors]:
    data = json.loads((HERE / "meaning.json").read_text(encoding="utf-8"))
    return {name: Floors(**values) for name, values in data["models"].items()}


def floors_for(model: str) -> Floors | None:
    """The measured floors of the model named `model` (None: none were measured)."""
    return _floors_file().get(model)


_instructions: dict[str, np.ndarray] = {}
_instructions_lock = threading.Lock()


def _instruction_vectors(model: SentenceModel) -> np.ndarray:
    with _instructions_lock:
        if model.name not in _instructions:
            data = json.loads((HERE / "instructions.json").read_text(encoding="utf-8"))
            _instructions[model.name] = model.encode_sentences(data["instructions"])
        return _instructions[model.name]


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _digits(token: str) -> str:
    return "".join(str(unicodedata.digit(ch)) for ch in token if ch.isdigit())


def _comparable(text: str) -> str:
    """Text as quotes are compared: NFC, one space between words, one kind of apostrophe."""
    return " ".join(normalize(text).replace("’", "'").replace("‘", "'").split())


def _sentences(draft: Draft) -> list[tuple[str, tuple[int, ...]]]:
    """Each sentence of the draft, with the passages its item cites."""
    text = " ".join(s for s, _ in draft.sentences)
    language = profile(identify(text)[0] if text else None)
    out = []
    for item, cited in draft.sentences:
        out += [(s, cited) for s in (language.sentences(item) or (item,))]
    return out


def render(sentences: Sequence[tuple[str, tuple[int, ...]]]) -> str:
    return " ".join(f"{s} {''.join(f'[{n}]' for n in cited)}".strip() for s, cited in sentences)


def check(
    draft: Draft, sources: Sequence[Source], model: SentenceModel, floors: Floors | None = None
) -> Verdict:
    """The verdict on `draft`, written from `sources` (numbered as the answer's citations)."""
    if draft.problem is not None:
        return Verdict(problem=draft.problem, kind=draft.kind)
    if not draft.found or not draft.sentences:
        return Verdict(problem="the writer found no answer in the passages", kind="not_found")
    sentences = _sentences(draft)
    text = render(sentences)
    by_n = {s.n: s for s in sources}
    steps = (
        lambda: _limits(text, sentences),
        lambda: _pings_and_links(text),
        lambda: _citations(sentences, by_n),
        lambda: _quotes(sentences, by_n),
        lambda: _numbers_and_names(sentences, by_n),
    )
    for step in steps:  # in order: a later check may rely on an earlier one (the citations)
        failed = step()
        if failed is not None:
            return failed
    floors = floors or floors_for(model.name)
    if floors is None:
        return Verdict(problem=f"no meaning floor is measured for {model.name}", kind="meaning")
    return _meaning(text, sentences, by_n, model, floors)


def _limits(text: str, sentences: list[tuple[str, tuple[int, ...]]]) -> Verdict | None:
    if len(text) > ANSWER_CHARS:
        return Verdict(
            problem=f"the answer is longer than {ANSWER_CHARS:,} characters", kind="limits"
        )
    if len(sentences) > MAX_SENTENCES:
        return Verdict(problem=f"the answer has more than {MAX_SENTENCES} sentences", kind="limits")
    return None


def _pings_and_links(text: str) -> Verdict | None:
    mention = _MENTION.search(text)
    if mention:
        return Verdict(problem=f"the answer mentions {mention.group()}", kind="mention")
    if _LINK.search(text):
        return Verdict(problem="the answer holds a link", kind="link")
    return None


def _citations(
    sentences: list[tuple[str, tuple[int, ...]]], by_n: dict[int, Source]
) -> Verdict | None:
    for sentence, cited in sentences:
        unknown = [n for n in cited if n not in by_n]
        if unknown:
            return Verdict(problem=f"[{unknown[0]}] names no passage it was given", kind="citation")
        if not cited:
            return Verdict(
                problem=f"a sentence cites no passage: “{_short(sentence)}”", kind="citation"
            )
    return None


def _quotes(
    sentences: list[tuple[str, tuple[int, ...]]], by_n: dict[int, Source]
) -> Verdict | None:
    for sentence, cited in sentences:
        texts = [_comparable(by_n[n].text) for n in cited]
        for match in _QUOTED.finditer(sentence):
            span = next(g for g in match.groups() if g is not None)
            parts = [_comparable(p).strip(_EDGES) for p in _ELLIPSIS.split(span)]
            parts = [p for p in parts if p]
            if parts and not any(all(p in t for p in parts) for t in texts):
                where = "".join(f"[{n}]" for n in cited)
                return Verdict(
                    problem=f"quote in {where} not in the passage: “{_short(span)}”",
                    kind="quote",
                )
    return None


def _numbers_and_names(
    sentences: list[tuple[str, tuple[int, ...]]], by_n: dict[int, Source]
) -> Verdict | None:
    for sentence, cited in sentences:
        joined = " ".join(by_n[n].text for n in cited)
        where = "".join(f"[{n}]" for n in cited)
        numbers = {_digits(m.group()) for m in _NUMBER.finditer(joined)}
        for m in _NUMBER.finditer(sentence):
            if _digits(m.group()) not in numbers:
                return Verdict(
                    problem=f"“{m.group()}” in {where} is not in the passage", kind="number"
                )
        lowered = _comparable(joined).lower()
        bare = _QUOTED.sub(" ", sentence)  # quoted words were compared whole, above
        words = [m.group() for m in _WORD.finditer(bare)]
        for word in words[1:]:  # the first is capitalised as a sentence's first word
            name = word.strip(_EDGES).removesuffix("'s").removesuffix("’s")
            if len(name) > 1 and name[0].isupper() and _comparable(name).lower() not in lowered:
                return Verdict(problem=f"“{name}” in {where} is not in the passage", kind="name")
    return None


def _meaning(
    text: str,
    sentences: list[tuple[str, tuple[int, ...]]],
    by_n: dict[int, Source],
    model: SentenceModel,
    floors: Floors,
) -> Verdict:
    cited = sorted({n for _, c in sentences for n in c})
    candidates = [
        (n, s)
        for n in cited
        for s in profile(identify(by_n[n].text)[0]).sentences(by_n[n].text) or (by_n[n].text,)
    ]
    vectors = model.encode_sentences([s for s, _ in sentences] + [s for _, s in candidates])
    written, theirs = vectors[: len(sentences)], vectors[len(sentences) :]
    planted = (theirs @ _instruction_vectors(model).T).max(axis=1) >= floors.instruction
    support: dict[int, list[str]] = {}
    for i, (sentence, numbers) in enumerate(sentences):
        scores = theirs @ written[i]
        cited_here = [j for j, (n, _) in enumerate(candidates) if n in numbers]
        closest = max(cited_here, key=lambda j: scores[j], default=None)
        if closest is not None and planted[closest]:
            # Closer to the planted instruction than to anything the article states: the
            # sentence does what the article told a model to say.
            n = candidates[closest][0]
            return Verdict(
                problem=f"“{_short(sentence)}” follows an instruction planted in [{n}]",
                kind="instruction",
            )
        usable = [j for j in cited_here if not planted[j]]
        best = max(usable, key=lambda j: scores[j], default=None)
        if best is None or scores[best] < floors.supported:
            where = "".join(f"[{n}]" for n in numbers)
            return Verdict(problem=f"“{_short(sentence)}” is not what {where} says", kind="meaning")
        n, supporting = candidates[best]
        if supporting not in support.setdefault(n, []):
            support[n].append(supporting)
    return Verdict(text=text, support=support)
