"""What the commands read besides their arguments: standard input and files of lines."""

from __future__ import annotations

import io
import sys
from typing import IO

from index.errors import BadInput
from index.ingest.paragraphs import decode_bytes


def is_url(value: str) -> bool:
    return "://" in value or value.lower().startswith(("http:", "https:", "ftp:", "file:"))


def read_stdin(limit: int) -> str:
    """Standard input as text, read as bytes up to the size limit: bad UTF-8, binary data or an
    endless pipe get a clear message, not a traceback or a full memory."""
    binary = getattr(sys.stdin, "buffer", None)
    if binary is None:  # a text stream put in place of stdin (by a test harness)
        return str(sys.stdin.read(limit + 1))  # read_text checks the size
    data = binary.read(limit + 1)
    if len(data) > limit:
        raise BadInput(
            f"The standard input is over the limit of {limit / 1e6:,.1f} MB; "
            "split it into smaller articles."
        )
    return decode_bytes(data, "The standard input")


def stdin_lines() -> IO[str]:
    binary = getattr(sys.stdin, "buffer", None)
    if binary is None:  # a text stream put in place of stdin (by a test harness)
        return sys.stdin
    return io.TextIOWrapper(binary, encoding="utf-8", errors="replace")


def open_text(path: str) -> IO[str]:
    try:
        # Bad UTF-8 on one line becomes U+FFFD there, instead of ending the whole batch.
        return open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by `with`
    except OSError as exc:
        raise BadInput(f"Cannot read {path}: {exc.strerror}; check the path.") from None
