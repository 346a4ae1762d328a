"""What the commands print: valid Unicode text, JSON lines, progress bars and answers."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator
from typing import IO, Any

from index.collection import Progress
from index.messages import N_, env_locale, question_locale, translate
from index.messages.catalogue import local_date
from index.records import Answer, Citation


def clean(value: str) -> str:
    """Command-line text as valid Unicode: bytes that were not UTF-8 reach Python as lone
    surrogates, which SQLite and a UTF-8 terminal refuse; each becomes U+FFFD."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # a surrogate that no byte made (only from Python callers)
        return value.encode("utf-8", "replace").decode("utf-8")


def print_json(data: Any, out: IO[str] | None = None) -> None:
    print(clean(json.dumps(data, ensure_ascii=False)), file=out or sys.stdout, flush=True)


@contextlib.contextmanager
def progress_bar(enabled: bool) -> Iterator[Progress | None]:
    """A progress bar on a terminal; nothing when piped or printing JSON."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
    from rich.progress import Progress as Bar

    with Bar(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), transient=True
    ) as bar:
        tasks: dict[str, Any] = {}

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)

        yield update


# rendering


def reader_locale(question: str) -> str:
    """The locale of the question's language where it is clear, else LANG's or LC_MESSAGES's,
    else English (index/messages)."""
    return question_locale(question, env_locale(os.environ))


def render_answer(answer: Answer, locale: str | None = None) -> str:
    """The answer, then the sources it cites, then the other passages that were considered;
    the headings in `locale`'s words (index/messages)."""

    def source(c: Citation) -> list[str]:
        details = ", ".join(x for x in (c.site, local_date(c.published, locale)) if x)
        lines = [f"[{c.n}] {c.title}, ¶{c.paragraph}" + (f" ({details})" if details else "")]
        if c.link or c.url:
            lines.append(f"    {c.link or c.url}")
        return lines

    cited = [c for c in answer.citations if f"[{c.n}]" in answer.answer]
    others = [c for c in answer.citations if c not in cited]
    lines = [answer.answer]
    if answer.written_by and cited:
        # Written in the model's words: each source's own sentences beside it, for checking.
        heading = N_("Written by {model}, from these sources:")
        lines += ["", translate(locale, heading, model=answer.written_by)]
        for c in cited:
            lines += source(c) + [f"    “{c.quote}”"]
        cited = []
    if answer.abstained:
        lines += ["", translate(locale, N_("Closest passages:"))]
        for c in others:
            lines += source(c) + [f"    “{c.quote}”"]
        return "\n".join(lines)
    if cited:
        lines += ["", translate(locale, N_("Sources:"))]
        for c in cited:
            lines += source(c)
    if others:
        lines += ["", translate(locale, N_("Also relevant:"))]
        for c in others:
            lines += source(c)
    return "\n".join(lines)
