"""The rules a summary is chosen by: data in summary-rules.json, set by
`python -m tools.fit_summaries` on the fit part of the summary sets and reported on the part no
choice saw (the figures are in summary-rules.md beside them)."""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from pathlib import Path

__all__ = ["RULES", "RULES_FILE", "SummaryRules", "load"]

RULES_FILE = Path(__file__).with_name("summary-rules.json")


@dataclass(frozen=True)
class SummaryRules:
    """How a summary's sentences are chosen (choose.py says what each one weighs)."""

    # The sentences read as candidates, from the article's start: news puts its point first,
    # and reading only these bounds the work whatever the article's length.
    candidates: int = 40
    # The passages whose mean vector is what the article is about (centrality), from its start.
    centroid_passages: int = 400
    # A sentence's place: worth exp(-index / position_scale), the first sentence 1.
    position_scale: float = 4.0
    # Closeness in meaning to the article's mean vector, in standard deviations among the
    # candidates, and the share of the title's words the sentence holds.
    centrality: float = 0.2
    title: float = 0.2
    # Nothing said twice: a candidate loses this much times how far its cosine with a sentence
    # already chosen passes `redundant_from`, over the rest of the way to 1.
    redundancy: float = 1.0
    redundant_from: float = 0.85
    # And a candidate whose words are this share or more of a chosen sentence's words (a
    # pull quote, a line the page repeats) says it again in so many words: never taken.
    repeated_words: float = 0.7
    # How long a summary is, in words (a wide character of Chinese or Japanese, or a letter of
    # an unspaced script, counts as half a word; any other character as a sixth).
    budget_words: float = 55.0
    least_sentences: int = 2
    most_sentences: int = 5
    # A candidate shorter than this is a heading, a credit or a fragment, not a statement.
    least_words: float = 4.0
    most_words: float = 90.0


def load(path: Path = RULES_FILE) -> SummaryRules:
    """The rules in `path`; a missing key keeps its default."""
    data = json.loads(path.read_text(encoding="utf-8"))
    known = {f.name for f in fields(SummaryRules)}
    return SummaryRules(**{k: v for k, v in data.get("rules", {}).items() if k in known})


RULES = load() if RULES_FILE.exists() else SummaryRules()
