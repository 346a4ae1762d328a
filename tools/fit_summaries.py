"""`python -m tools.fit_summaries`: set the summary rules (index/summaries/summary-rules.json).

Each rule is swept in turn over its grid, the others held, twice round, on the *fit* part of
every summary set (index/ops/eval_split.py, by article id); a step is kept when it raises the
sets' mean gain over lead-3 (ROUGE-1 and ROUGE-L F1, averaged), less twice how far any set's
ROUGE-1 or ROUGE-L falls more than half a point below lead-3's. The *choose* part then picks
between the rules swept and the defaults, and the figures written beside them are counted on
the fit and choose parts.
The report part is never read here: `python -m tools.bench.summaries` reports on it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
from pathlib import Path
from typing import Any

from index.summaries.rules import RULES_FILE, SummaryRules
from tools.bench.summaries import Item, lead, load_sets, ours, score

GRID: dict[str, list[Any]] = {
    "position_scale": [1.5, 2.0, 3.0, 4.0, 6.0, 10.0],
    "centrality": [0.0, 0.05, 0.1, 0.2, 0.3, 0.5],
    "title": [0.0, 0.1, 0.2, 0.4],
    # Swept together: the one does nothing without the other.
    "redundancy,redundant_from": [
        (weight, start) for weight in (0.0, 0.5, 1.0, 2.0) for start in (0.85, 0.9, 0.95, 0.98)
    ],
    "budget_words": [35.0, 40.0, 45.0, 50.0, 55.0, 60.0, 70.0],
}
SLACK = 0.5


def gains(
    sets: dict[str, list[Item]], rules: SummaryRules, part: str
) -> dict[str, dict[str, float]]:
    """Each set's ROUGE-1 and ROUGE-L gain over lead-3 on `part`, in points."""
    out = {}
    for name, items in sets.items():
        chosen = [i for i in items if i.part == part]
        got, base = score(chosen, ours(rules)), _lead(name, part, chosen)
        out[name] = {k: got[k] - base[k] for k in ("rouge1", "rouge2", "rougeL")}
        out[name]["words"] = got["words"]
    return out


_LEADS: dict[tuple[str, str], dict[str, float]] = {}


def _lead(name: str, part: str, items: list[Item]) -> dict[str, float]:
    if (name, part) not in _LEADS:
        _LEADS[name, part] = score(items, lead)
    return _LEADS[name, part]


def objective(found: dict[str, dict[str, float]]) -> float:
    """The sets' mean gain, less twice how far the worst set's ROUGE-1 or ROUGE-L falls more
    than SLACK below lead-3's: no set is given up for the others."""
    worst = min(min(g["rouge1"], g["rougeL"]) for g in found.values())
    mean = statistics.fmean((g["rouge1"] + g["rougeL"]) / 2 for g in found.values())
    return mean + 2 * min(0.0, worst + SLACK)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path("data/summary-sets"))
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sets = load_sets(args.data_dir)
    rules = SummaryRules()
    best = objective(gains(sets, rules, "fit"))
    print(f"defaults: fit {best:+.2f}")
    for _ in range(args.rounds):
        for name, values in GRID.items():
            for value in values:
                names = name.split(",")
                chosen_values = value if len(names) > 1 else (value,)
                trial = dataclasses.replace(rules, **dict(zip(names, chosen_values, strict=True)))
                got = objective(gains(sets, trial, "fit"))
                if got > best + 1e-9:
                    best, rules = got, trial
                    print(f"  {name} = {value}: fit {got:+.2f}")
    candidates = {"swept": rules, "defaults": SummaryRules()}
    chosen = max(candidates, key=lambda k: objective(gains(sets, candidates[k], "choose")))
    rules = candidates[chosen]
    figures = {part: gains(sets, rules, part) for part in ("fit", "choose")}
    print(f"kept: {chosen}")
    print(json.dumps(figures, indent=1))
    RULES_FILE.write_text(
        json.dumps(
            {
                "about": "Set by python -m tools.fit_summaries on the fit part of each summary "
                "set, chosen between swept and default rules on the choose part; gains over "
                "lead-3 in ROUGE F1 points on each (summary-rules.md).",
                "rules": dataclasses.asdict(rules),
                "gains": {
                    p: {s: {k: round(v, 2) for k, v in g.items()} for s, g in f.items()}
                    for p, f in figures.items()
                },
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"written: {RULES_FILE}")


if __name__ == "__main__":
    main()
