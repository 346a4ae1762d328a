"""Settings and files that protect the bot's token and the servers' articles."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from bot.config import BotSettings
from index.errors import BadInput
from index.storage.sqlite_store import Store

ROOT = Path(__file__).resolve().parents[1]


def test_the_test_only_discord_address_is_never_read_from_a_dot_env_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ARTICLEBOT_DISCORD_API_BASE", raising=False)
    monkeypatch.delenv("ARTICLEBOT_DISCORD_GATEWAY", raising=False)
    (tmp_path / ".env").write_text(
        "ARTICLEBOT_DISCORD_API_BASE=http://evil.example/api/v10\n"
        "ARTICLEBOT_DISCORD_GATEWAY=ws://evil.example/gateway\n"
    )
    settings = BotSettings.from_env()
    assert settings.api_base is None and settings.gateway is None


def test_the_test_only_discord_address_must_be_on_this_machine() -> None:
    with pytest.raises(BadInput, match="only point at this machine"):
        BotSettings.from_env({"ARTICLEBOT_DISCORD_API_BASE": "http://10.0.0.5:8080/api/v10"})
    local = BotSettings.from_env({"ARTICLEBOT_DISCORD_API_BASE": "http://127.0.0.1:8080/api"})
    assert local.api_base == "http://127.0.0.1:8080/api"


def test_dot_env_is_kept_out_of_git() -> None:
    ignored = (ROOT / ".gitignore").read_text().split()
    assert ".env" in ignored


def test_a_new_data_folder_and_database_are_private_to_their_owner(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"
    store = Store(data / "articlebot.db")
    store.close()
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for path in data.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path.name
