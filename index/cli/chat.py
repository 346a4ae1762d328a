"""`articlebot chat`: question after question, each carrying on from the ones before."""

from __future__ import annotations

import argparse
import collections
import sys

from index.cli.arguments import Subcommands, positive
from index.cli.output import reader_locale, render_answer
from index.errors import ArticlebotError
from index.library import Library
from index.messages import in_locale
from index.writer import write_answer

# How many earlier questions a chat carries on from (a Discord thread reads as many).
CHAT_TURNS = 3


def cmd_chat(args: argparse.Namespace, library: Library) -> int:
    collection = library.collection(args.collection)
    print("Ask about your articles; an empty line or Ctrl-D ends.", file=sys.stderr)
    # The conversation so far, as a Discord thread keeps it: its last questions and what their
    # answers quoted, so "why did he go there?" carries on from "who visited Warsaw?".
    turns: collections.deque[tuple[str, frozenset[int]]] = collections.deque(maxlen=CHAT_TURNS)
    while True:
        try:
            question = input("? ")
        except (EOFError, KeyboardInterrupt):
            print(file=sys.stderr)
            return 0
        if not question.strip() or question.strip().lower() in {"quit", "exit"}:
            return 0
        try:
            answer = collection.ask_in_conversation(
                question,
                earlier=[q for q, _ in turns],
                quoted=frozenset(a for _, ids in turns for a in ids),
                top_k=args.top_k,
            )
        except ArticlebotError as exc:
            print(f"error: {exc}", file=sys.stderr)
            continue
        cited = {c.article_id for c in answer.citations} if not answer.abstained else set()
        turns.append((question, frozenset(cited)))
        if not args.no_writer:  # worded by the writer where one is configured and it checks out
            answer = write_answer(answer, library.writer, collection.embedder()).answer
        locale = reader_locale(question)
        print(render_answer(in_locale(answer, locale), locale), end="\n\n")


def register(sub: Subcommands, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("chat", parents=[common], help="ask question after question")
    p.add_argument("--top-k", type=positive, default=5, help="passages to consider (1-50)")
    p.add_argument(
        "--no-writer",
        action="store_true",
        help="quote the articles even where a writer is configured (ARTICLEBOT_LLM_*)",
    )
    p.set_defaults(func=cmd_chat)
