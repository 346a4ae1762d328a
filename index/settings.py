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

__all__ = ["Settings", "load_dotenv", "model_cache", "secrets_in_env"]

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
    return [s for s in [*passwords, env.get("DISCORD_TOKEN", "").strip()] if s]


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

    @property
    def secrets(self) -> list[str]:
        """What no log line may show: the database password (in the URL or its query)."""
        return database_passwords(self.database_url)

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
        )
