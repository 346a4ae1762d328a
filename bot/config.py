"""The bot's settings, read once from the environment and `.env` at start-up."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from index.errors import BadInput
from index.settings import Settings, load_dotenv

__all__ = ["BotSettings"]


def _optional(env: Mapping[str, str], key: str) -> str | None:
    return env.get(key, "").strip() or None


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
    core: Settings = field(default_factory=Settings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> BotSettings:
        if env is None:
            load_dotenv()
            env = os.environ
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
            api_base=_optional(env, "ARTICLEBOT_DISCORD_API_BASE"),
            gateway=_optional(env, "ARTICLEBOT_DISCORD_GATEWAY"),
            core=Settings.from_env(env),
        )
