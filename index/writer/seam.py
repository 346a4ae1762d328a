"""The seam between the answer path and a writer: what it is asked, what it gives back.

A writer is a peer the bot talks to, like the database: a server that rewrites an answer in
its own words from the passages the answer would cite. The answer path asks a `Writer` (the
HTTP client of client.py, or a test's stand-in) and checks what it wrote (checks.py) before
anything of it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Draft", "Request", "Source", "Writer", "WriterSettings"]


@dataclass(frozen=True)
class WriterSettings:
    """How to reach an OpenAI-compatible server (read at the edge, index/settings.py)."""

    base_url: (
        str  # e.g. http://localhost:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama-server)
    )
    model: str
    api_key: str | None = field(default=None, repr=False)  # never shown, never logged
    timeout_s: float = 20.0  # for the whole reply, from the request to its last word
    max_tokens: int = 400  # the cap on what it may write
    concurrency: int = 1  # writes under way at once; a question past them is not queued


@dataclass(frozen=True)
class Source:
    """A passage the writer may cite, by the number the answer's sources block gives it."""

    n: int
    title: str
    text: str


@dataclass(frozen=True)
class Request:
    """A question, and the passages its answer would cite."""

    question: str
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class Draft:
    """What the writer gave back: its sentences, each with the passages it cites, or why
    there is nothing to check (`problem`, one sentence, with `kind` for the count)."""

    sentences: tuple[tuple[str, tuple[int, ...]], ...] = ()
    found: bool = True  # False: the writer answered that the passages do not say
    problem: str | None = None
    kind: str = "written"
    seconds: float = 0.0


class Writer(Protocol):
    """A server that writes an answer from numbered passages."""

    @property
    def model(self) -> str:
        """The model's name, as the answer says who wrote it."""
        ...

    def write(self, request: Request) -> Draft:
        """Ask for an answer; never raises for what the server does (the Draft says it)."""
        ...
