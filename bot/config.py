"""The bot's settings, read once from the environment and `.env` at start-up."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, cast, get_args
from urllib.parse import urlsplit

from index.errors import BadInput
from index.settings import Settings, load_dotenv

from .healthcheck import parse_address

__all__ = ["BotSettings", "OnPermanentError", "on_permanent_error"]

# What the bot does after an error no restart mends: exit (code 2, which a systemd unit is told
# not to restart on), or log it and wait to be stopped, for a supervisor that restarts every
# exit whatever its code (compose's restart policies: docs/operate.md says why).
OnPermanentError = Literal["exit", "wait"]


def _optional(env: Mapping[str, str], key: str) -> str | None:
    return env.get(key, "").strip() or None


def _loopback_only(key: str, url: str | None) -> str | None:
    """A test-only Discord address, refused unless it is on this machine (the token goes there)."""
    if url is None:
        return None
    host = urlsplit(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise BadInput(
            f"{key} may only point at this machine (127.0.0.1, ::1 or localhost), since the "
            "bot sends its token there; unset it to connect to Discord."
        )
    return url


def _count(env: Mapping[str, str], key: str, default: int) -> int:
    raw = _optional(env, key)
    if raw is None:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 64:
        raise BadInput(f"{key} must be a whole number from 1 to 64, not {raw[:40]!r}.")
    return int(raw)


def _shard_ids(raw: str | None, count: int | None) -> list[int] | None:
    """`0-3`, `4,5` or `0-3,8`: the shards this process runs, each below the shard count."""
    if raw is None:
        return None
    if count is None:
        raise BadInput(
            "ARTICLEBOT_SHARD_IDS needs ARTICLEBOT_SHARD_COUNT, the total over all processes."
        )
    ids: set[int] = set()
    for part in raw.replace(" ", "").split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or not (high or low).isdigit() or int(low) > int(high or low):
            raise BadInput(
                f"ARTICLEBOT_SHARD_IDS must list shard numbers like 0-3 or 0,2, not {raw[:40]!r}."
            )
        ids.update(range(int(low), int(high or low) + 1))
    if max(ids) >= count:
        raise BadInput(
            f"ARTICLEBOT_SHARD_IDS goes up to {max(ids)}, but shards are numbered from 0 to "
            f"{count - 1} (ARTICLEBOT_SHARD_COUNT={count})."
        )
    return sorted(ids)


def _on_or_off(env: Mapping[str, str], key: str, default: bool) -> bool:
    raw = (_optional(env, key) or ("on" if default else "off")).lower()
    if raw not in ("on", "off"):
        raise BadInput(f"{key} must be on or off, not {raw[:20]!r}.")
    return raw == "on"


def on_permanent_error(env: Mapping[str, str]) -> OnPermanentError:
    raw = (_optional(env, "ARTICLEBOT_ON_PERMANENT_ERROR") or "exit").lower()
    if raw not in get_args(OnPermanentError):
        raise BadInput(f"ARTICLEBOT_ON_PERMANENT_ERROR must be exit or wait, not {raw[:20]!r}.")
    return cast(OnPermanentError, raw)


def metrics_address(raw: str | None) -> tuple[str, int] | None:
    """`host:port` (`[::1]:port` for IPv6) where /healthz and /metrics are served."""
    try:
        return parse_address(raw)  # the health check's own parser: one syntax for both
    except ValueError as error:
        raise BadInput(str(error)) from None


@dataclass(frozen=True)
class BotSettings:
    token: str | None = None
    # Only members with this role (or Manage Server) may add articles; None lets everyone add.
    editor_role: str | None = None
    # Commands are copied to this guild and synced there, which takes effect at once.
    dev_guild: int | None = None
    # Test-only: point discord.py at a local fake of Discord's REST API and gateway.
    api_base: str | None = None
    gateway: str | None = None
    # Threads that fetch and embed added articles, apart from those that answer questions, so
    # slow sites or big files can keep adds waiting but never questions.
    add_workers: int = 2
    # How often the feeds every server follows are read for new articles, in minutes.
    feed_poll_minutes: int = 30
    # Discord shards: how many over all processes (None: as many as Discord recommends), and
    # which of them this process runs (None: all). Several processes share one PostgreSQL.
    shard_count: int | None = None
    shard_ids: list[int] | None = None
    # Where /healthz and /metrics are served (None: not served); 127.0.0.1 keeps them private.
    metrics_address: tuple[str, int] | None = None
    on_permanent_error: OnPermanentError = "exit"
    # Whether a server that has not chosen (/settings writer) gets written answers, where a
    # writer is configured (core.writer).
    writer_default: bool = True
    core: Settings = field(default_factory=Settings)

    @property
    def secrets(self) -> list[str]:
        """What no log line may show: the token and the database password."""
        return [s for s in [self.token, *self.core.secrets] if s]

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> BotSettings:
        if env is None:
            # The test-only Discord addresses come from the process environment alone, never
            # from a .env file someone left in the working folder.
            process = dict(os.environ)
            load_dotenv()
            env = os.environ
        else:
            process = dict(env)
        raw_guild = _optional(env, "ARTICLEBOT_DEV_GUILD")
        if raw_guild is not None and not raw_guild.isdigit():
            raise BadInput(
                f"ARTICLEBOT_DEV_GUILD must be a server id (digits), not {raw_guild!r}; "
                "copy it with Developer Mode on (right-click the server, Copy Server ID)."
            )
        raw_count = _optional(env, "ARTICLEBOT_SHARD_COUNT")
        if raw_count is not None and not (raw_count.isdigit() and 1 <= int(raw_count) <= 100_000):
            raise BadInput(
                f"ARTICLEBOT_SHARD_COUNT must be a whole number of shards, not {raw_count[:40]!r}."
            )
        shard_count = int(raw_count) if raw_count else None
        return cls(
            shard_count=shard_count,
            shard_ids=_shard_ids(_optional(env, "ARTICLEBOT_SHARD_IDS"), shard_count),
            token=_optional(env, "DISCORD_TOKEN"),
            editor_role=_optional(env, "ARTICLEBOT_EDITOR_ROLE"),
            dev_guild=int(raw_guild) if raw_guild else None,
            api_base=_loopback_only(
                "ARTICLEBOT_DISCORD_API_BASE", _optional(process, "ARTICLEBOT_DISCORD_API_BASE")
            ),
            gateway=_loopback_only(
                "ARTICLEBOT_DISCORD_GATEWAY", _optional(process, "ARTICLEBOT_DISCORD_GATEWAY")
            ),
            add_workers=_count(env, "ARTICLEBOT_ADD_WORKERS", 2),
            feed_poll_minutes=_count(env, "ARTICLEBOT_FEED_POLL_MINUTES", 30),
            metrics_address=metrics_address(_optional(env, "ARTICLEBOT_METRICS_ADDRESS")),
            on_permanent_error=on_permanent_error(env),
            writer_default=_on_or_off(env, "ARTICLEBOT_LLM_DEFAULT", True),
            core=Settings.from_env(env),
        )
