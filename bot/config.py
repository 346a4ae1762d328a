"""The bot's settings, read once from the environment and `.env` at start-up."""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from index.errors import BadInput
from index.settings import Settings, load_dotenv

__all__ = ["BotSettings"]


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
    core: Settings = field(default_factory=Settings)

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
        return cls(
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
            core=Settings.from_env(env),
        )
