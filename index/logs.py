"""Logs an operator can use: one line per question and per add (`log_event`), plain text or JSON
lines, and no secret in any line.

`configure_logging` is called once by each edge (the bot's launcher, the command line) with the
settings it read. Every line, whatever logged it (discord.py, psycopg, a traceback), goes
through one handler whose formatter takes out the secrets it was given (the Discord token, the
database password) and the password of any URL, so a secret never reaches a log line.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import traceback
from collections.abc import Iterable, Mapping
from types import TracebackType
from typing import Any, Literal, TextIO
from urllib.parse import quote, unquote

from index.errors import without_passwords

__all__ = [
    "JsonFormatter",
    "LogFormat",
    "Redactor",
    "TextFormatter",
    "configure_logging",
    "log_event",
    "logs_content",
]

LogFormat = Literal["text", "json"]
HIDDEN = "***"
# The handler configure_logging installs, found again when it is called a second time.
_OURS = "_articlebot_handler"
_content = False


class Redactor:
    """Takes the given secrets out of a text, and any password written in a URL (`user:pass@`,
    `?password=`, `&password=`) or in libpq's keyword form (`password=...`)."""

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                # As written, and as it appears inside a URL (percent-encoded) or decoded.
                forms.update({secret, quote(secret, safe=""), unquote(secret)})
        # Longest first, so a secret that contains another is taken out whole.
        self.secrets = sorted((f for f in forms if f), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        text = without_passwords(text, HIDDEN)
        for secret in self.secrets:
            text = text.replace(secret, HIDDEN)
        return text

    def value(self, value: Any) -> Any:
        """A JSON value with every string in it redacted."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {self(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value


class TextFormatter(logging.Formatter):
    """The usual one-line format, with the secrets taken out of the whole line."""

    def __init__(self, redactor: Redactor, fmt: str | None = None) -> None:
        super().__init__(fmt or "%(asctime)s %(levelname)-8s %(name)s: %(message)s")
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        return self.redactor(super().format(record))


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, an event's fields, a traceback."""

    def __init__(self, redactor: Redactor) -> None:
        super().__init__()
        self.redactor = redactor

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        event = getattr(record, "event", None)
        if event:
            line["event"] = event
            line.update(getattr(record, "fields", {}))
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        text = json.dumps(self.redactor.value(line), ensure_ascii=False, default=str)
        return self.redactor(text)


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a line is logged (as logging's last resort does),
    so a handler installed once keeps working when stderr is replaced (tests capture it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _value: TextIO) -> None:
        pass


def configure_logging(
    *,
    log_format: LogFormat = "text",
    secrets: Iterable[str | None] = (),
    content: bool = False,
    level: int | None = None,
    text_format: str | None = None,
) -> logging.Handler:
    """Send every log line to standard error through one redacting handler, replacing the one
    an earlier call installed; `level`, when given, becomes the root logger's level."""
    global _content
    _content = content
    redactor = Redactor(secrets)
    handler = _StderrHandler()
    formatter: logging.Formatter = (
        JsonFormatter(redactor) if log_format == "json" else TextFormatter(redactor, text_format)
    )
    handler.setFormatter(formatter)
    setattr(handler, _OURS, True)
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, _OURS, False)]:
        root.removeHandler(old)
    root.addHandler(handler)
    if level is not None:
        root.setLevel(level)
    sys.excepthook = redacting_excepthook(redactor)
    return handler


def redacting_excepthook(redactor: Redactor) -> Any:
    """A `sys.excepthook` that prints an uncaught exception's traceback with the secrets taken
    out: a bug's traceback can quote a database URL as much as a log line can."""

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        sys.stderr.write(redactor("".join(traceback.format_exception(kind, value, tb))))

    return hook


def logs_content() -> bool:
    """Whether log lines may carry what members wrote (ARTICLEBOT_LOG_CONTENT=1)."""
    return _content


def log_event(
    logger: logging.Logger,
    event: str,
    fields: Mapping[str, Any],
    *,
    content: Mapping[str, Any] | None = None,
    level: int = logging.INFO,
) -> None:
    """One line for one question or add: `event key=value ...`, the same fields as JSON keys.
    `content` (a question's or article's text, a title) is added only when logs may carry it."""
    shown = dict(fields)
    if content and _content:
        shown.update(content)
    text = " ".join([event] + [f"{k}={_plain(v)}" for k, v in shown.items() if v is not None])
    logger.log(level, "%s", text, extra={"event": event, "fields": shown})


def _plain(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    text = str(value)
    # Text with spaces or quotes is quoted, so that key=value pairs stay readable by tools.
    return json.dumps(text, ensure_ascii=False) if re.search(r'[\s"=]', text) or not text else text
