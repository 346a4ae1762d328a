"""An optional writer: an OpenAI-compatible server (Ollama, llama-server, vLLM, LM Studio,
OpenAI) that words the answer from the passages it would cite; what it writes is shown only
when every check passes (checks.py), else the extractive answer, with why.

`client.py` is the one module that talks to the server, `checks.py` the one that judges what it
wrote, and `answer.py` the step the edges (the command line, the Discord cogs) call after
`Collection.ask`, through the `Writer` seam (seam.py).
"""

from __future__ import annotations

from index.writer.answer import (
    NOT_CONFIGURED,
    SUMMARY_QUESTION,
    Written,
    fallback,
    write_answer,
    write_summary,
)
from index.writer.checks import ANSWER_CHARS, Floors, SentenceModel, Verdict, check, floors_for
from index.writer.client import OpenAICompatible
from index.writer.seam import Draft, Request, Source, Writer, WriterSettings

__all__ = [
    "ANSWER_CHARS",
    "NOT_CONFIGURED",
    "SUMMARY_QUESTION",
    "Draft",
    "Floors",
    "OpenAICompatible",
    "Request",
    "SentenceModel",
    "Source",
    "Verdict",
    "Writer",
    "WriterSettings",
    "Written",
    "check",
    "fallback",
    "floors_for",
    "write_answer",
    "write_summary",
]
