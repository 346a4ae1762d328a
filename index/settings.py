"""Settings read once at the edge (the CLI, the bot) from the environment and `.env`.

The core takes plain values; only this module reads `os.environ`.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import cast, get_args
from urllib.parse import parse_qs, urlsplit

from index.embedding.embedder import Runtime
from index.errors import BadInput, passwords_in
from index.ingest.readers import Limits
from index.library import Library
from index.logs import LogFormat
from index.writer.seam import WriterSettings

__all__ = ["Settings", "load_dotenv", "model_cache", "secrets_in_env", "writer_settings"]

_TRUE = {"1", "true", "yes", "on"}
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def database_passwords(url: str | None) -> list[str]:
    """The password of a postgresql:// URL, given in it (`user:pass@`) or as its `password`
    parameter; read by pattern when the URL is too broken to parse (libpq's messages repeat a
    broken URL as it was typed)."""
    if not url:
        return []
    found = passwords_in(url)  # by pattern: also in a URL too broken to parse
    with contextlib.suppress(ValueError):  # an unclosed [ or a bad port: refused elsewhere
        parts = urlsplit(url)
        found += [p for p in parse_qs(parts.query).get("password", []) if p]
        if parts.password:
            found.append(parts.password)
    return sorted(set(found))


def secrets_in_env(env: Mapping[str, str] | None = None) -> list[str]:
    """What no message may show, read from the environment even when the settings are not
    valid (for the edges' last word on an error): the database password, the Discord token."""
    env = os.environ if env is None else env
    passwords = database_passwords(env.get("ARTICLEBOT_DATABASE_URL", "").strip())
    passwords += database_passwords(env.get("ARTICLEBOT_LLM_BASE_URL", "").strip())
    keys = [env.get("DISCORD_TOKEN", "").strip(), env.get("ARTICLEBOT_LLM_API_KEY", "").strip()]
    return [s for s in [*passwords, *keys] if s]


def load_dotenv() -> None:
    """Read `.env` from the working folder into the environment, never overriding it."""
    try:
        from dotenv import load_dotenv as _load
    except ImportError:  # python-dotenv is a dependency; tolerate a stripped install
        return
    _load(Path.cwd() / ".env", override=False)


def model_cache(env: Mapping[str, str]) -> Path:
    """The folder every data folder and process of this user shares the model's export in:
    ARTICLEBOT_MODEL_CACHE, else `$XDG_CACHE_HOME/articlebot`, else `~/.cache/articlebot`
    (where sentence-transformers and Hugging Face keep theirs)."""
    chosen = env.get("ARTICLEBOT_MODEL_CACHE", "").strip()
    if chosen:
        return Path(chosen).expanduser()
    xdg = env.get("XDG_CACHE_HOME", "").strip()
    # The XDG rule: a relative XDG_CACHE_HOME is invalid and ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "articlebot"
    home = env.get("HOME", "").strip()
    return (Path(home) if home else Path.home()) / ".cache" / "articlebot"


def _number(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise BadInput(f"{key} must be a number, not {raw!r}; fix it in .env.") from None
    # float() also reads "nan" and "inf"; past 1e12 a limit in MB no longer fits a file offset.
    if not (math.isfinite(value) and 0 < value <= 1e12):
        raise BadInput(f"{key} must be a number above zero (and at most 1e12); fix it in .env.")
    return value


def writer_settings(env: Mapping[str, str]) -> WriterSettings | None:
    """The optional writer (index/writer): an OpenAI-compatible server and the model it runs,
    both named or neither. Nothing is read from OPENAI_* variables."""
    url = env.get("ARTICLEBOT_LLM_BASE_URL", "").strip()
    model = env.get("ARTICLEBOT_LLM_MODEL", "").strip()
    if not url and not model:
        return None
    if not url or not model:
        raise BadInput(
            "The writer needs both ARTICLEBOT_LLM_BASE_URL (such as http://localhost:11434/v1) "
            "and ARTICLEBOT_LLM_MODEL (the model that server runs); set both in .env, or neither."
        )
    return WriterSettings(
        base_url=url,
        model=model,
        api_key=env.get("ARTICLEBOT_LLM_API_KEY", "").strip() or None,
        timeout_s=_number(env, "ARTICLEBOT_LLM_TIMEOUT_S", 20),
        max_tokens=int(_number(env, "ARTICLEBOT_LLM_MAX_TOKENS", 400)),
        concurrency=max(1, int(_number(env, "ARTICLEBOT_LLM_CONCURRENCY", 1))),
    )


@dataclass(frozen=True)
class Settings:
    data_dir: Path = Path("data")
    model: str | None = None
    backend: Runtime = "auto"
    limits: Limits = Limits()
    max_question_chars: int = 1_000
    index_memory_bytes: int = 128_000_000
    database_url: str | None = None
    # Where the model's export is kept, for every data folder of this user (None: in the data
    # folder's `models/`, as a Library made by hand keeps it).
    model_cache: Path | None = None
    # Logs: "text" or "json" (JSON lines); whether a line may carry a question's or an
    # article's text; the level (None: each edge's default, INFO for the bot).
    log_format: LogFormat = "text"
    log_content: bool = False
    log_level: int | None = None
    # The optional writer (index/writer); None: answers are extractive.
    writer: WriterSettings | None = None

    @property
    def secrets(self) -> list[str]:
        """What no log line may show: the database password (in the URL or its query), and
        the writer's API key."""
        key = [self.writer.api_key] if self.writer and self.writer.api_key else []
        writer_url = database_passwords(self.writer.base_url) if self.writer else []
        return database_passwords(self.database_url) + writer_url + key

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        env = os.environ if env is None else env
        backend = env.get("ARTICLEBOT_BACKEND", "auto").strip().lower() or "auto"
        if backend not in get_args(Runtime):
            raise BadInput(
                f"ARTICLEBOT_BACKEND must be one of {', '.join(get_args(Runtime))}, "
                f"not {backend!r}."
            )
        limits = Limits(
            max_file_bytes=int(_number(env, "ARTICLEBOT_MAX_FILE_MB", 20) * 1_000_000),
            max_page_bytes=int(_number(env, "ARTICLEBOT_MAX_PAGE_MB", 10) * 1_000_000),
            max_paragraphs=int(_number(env, "ARTICLEBOT_MAX_PARAGRAPHS", 5_000)),
            allow_private_networks=env.get("ARTICLEBOT_ALLOW_PRIVATE_NETWORKS", "").lower()
            in _TRUE,
            fetch_timeout_s=_number(env, "ARTICLEBOT_FETCH_TIMEOUT_S", 30),
            max_text_chars=int(_number(env, "ARTICLEBOT_MAX_TEXT_MB", 2) * 1_000_000),
            max_html_tags=int(_number(env, "ARTICLEBOT_MAX_HTML_TAGS", 40_000)),
            max_articles=int(_number(env, "ARTICLEBOT_MAX_ARTICLES", 10_000)),
            max_passages=int(_number(env, "ARTICLEBOT_MAX_PASSAGES", 500_000)),
        )
        database_url = env.get("ARTICLEBOT_DATABASE_URL", "").strip() or None
        if database_url and not database_url.startswith(("postgresql://", "postgres://")):
            raise BadInput(
                "ARTICLEBOT_DATABASE_URL must be a postgresql:// URL, or empty for the data "
                "folder; fix it in .env."
            )
        log_format = env.get("ARTICLEBOT_LOG_FORMAT", "").strip().lower() or "text"
        if log_format not in get_args(LogFormat):
            raise BadInput(f"ARTICLEBOT_LOG_FORMAT must be text or json, not {log_format[:20]!r}.")
        raw_level = env.get("ARTICLEBOT_LOG_LEVEL", "").strip().upper()
        if raw_level and raw_level not in _LEVELS:
            raise BadInput(
                f"ARTICLEBOT_LOG_LEVEL must be one of {', '.join(_LEVELS).lower()}, "
                f"not {raw_level[:20].lower()!r}."
            )
        return cls(
            log_format=cast(LogFormat, log_format),
            log_content=env.get("ARTICLEBOT_LOG_CONTENT", "").strip().lower() in _TRUE,
            log_level=getattr(logging, raw_level) if raw_level else None,
            database_url=database_url,
            data_dir=Path(env.get("ARTICLEBOT_DATA_DIR", "").strip() or "data"),
            model_cache=model_cache(env),
            model=env.get("ARTICLEBOT_MODEL", "").strip() or None,
            backend=cast(Runtime, backend),
            limits=limits,
            max_question_chars=int(_number(env, "ARTICLEBOT_MAX_QUESTION_CHARS", 1_000)),
            index_memory_bytes=int(_number(env, "ARTICLEBOT_INDEX_MEMORY_MB", 128) * 1_000_000),
            writer=writer_settings(env),
        )

    def library(self, data_dir: Path | None = None) -> Library:
        return Library(
            data_dir or self.data_dir,
            model_path=self.model,
            backend=self.backend,
            limits=self.limits,
            max_question_chars=self.max_question_chars,
            index_memory_bytes=self.index_memory_bytes,
            database_url=self.database_url,
            model_cache=self.model_cache,
            writer=self.writer,
        )
