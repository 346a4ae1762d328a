"""`articlebot feedback`: the Helpful / Not helpful votes given to answers in Discord."""

from __future__ import annotations

import argparse
from pathlib import Path

from index.cli.arguments import Subcommands
from index.cli.output import print_json
from index.library import Library
from index.storage.conversations import Vote


def cmd_feedback(args: argparse.Namespace, library: Library) -> int:
    store = library.conversations()
    try:
        votes = store.votes([args.collection] if args.collection else None)
    finally:
        store.close()
    if args.not_helpful:
        votes = [v for v in votes if not v.helpful]
    if args.json:
        print_json([v.to_json() for v in votes])
        return 0
    if not votes:
        print("No feedback yet: members rate answers with the Helpful / Not helpful buttons.")
        return 0
    for v in votes:
        verdict = "helpful    " if v.helpful else "not helpful"
        kind = f"written by {v.written_by}" if v.written_by else "quoted"
        print(f"{v.voted_at[:16]}  {verdict}  {v.collection}  {kind}  {v.question}")
    print()
    for line in by_kind(votes):
        print(line)
    return 0


def by_kind(votes: list[Vote]) -> list[str]:
    """The votes of each kind of answer side by side: the articles' quotes, and each model's
    words (`/settings writer`), with the share judged helpful."""
    kinds: dict[str, list[bool]] = {}
    for v in votes:
        kinds.setdefault(f"written by {v.written_by}" if v.written_by else "quoted", []).append(
            v.helpful
        )
    lines = []
    for kind in sorted(kinds, key=lambda k: (k != "quoted", k)):
        judged = kinds[kind]
        helpful = sum(judged)
        lines.append(
            f"{kind}: {helpful} helpful, {len(judged) - helpful} not helpful "
            f"({helpful / len(judged):.0%} helpful)"
        )
    return lines


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "feedback", help="list the Helpful / Not helpful votes members gave answers in Discord"
    )
    p.add_argument(
        "--data-dir", type=Path, help="data folder (default: $ARTICLEBOT_DATA_DIR or ./data)"
    )
    p.add_argument(
        "--collection", help="only this collection, e.g. guild-<server id> (default: all)"
    )
    p.add_argument("--not-helpful", action="store_true", help="only the answers judged unhelpful")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(func=cmd_feedback)
