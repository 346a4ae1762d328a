"""The bot as a program: settings, command metadata, syncing, and `python -m bot`."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import discord
import pytest
import simcord
from discord import app_commands
from discord.ext import commands

from bot import BotSettings, create_bot
from bot.client import ArticleBot
from index import Library
from index.errors import ArticlebotError
from index.settings import Settings

pytestmark = pytest.mark.slow  # the bot started as a real process

DEV_GUILD = 1_234_567_890_123_456_789


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "ARTICLEBOT_"))}
    env.update(extra)
    return env


def test_create_bot_reads_the_environment_and_dotenv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in list(os.environ):
        if key.startswith(("DISCORD_", "ARTICLEBOT_")):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "DISCORD_TOKEN=from-dotenv\nARTICLEBOT_EDITOR_ROLE=Editors\n"
        f"ARTICLEBOT_DATA_DIR={tmp_path / 'from-dotenv'}\n"
    )
    monkeypatch.setenv("ARTICLEBOT_DATA_DIR", str(tmp_path / "from-env"))  # the environment wins
    monkeypatch.setenv("ARTICLEBOT_DEV_GUILD", str(DEV_GUILD))

    bot = create_bot()

    assert isinstance(bot, discord.ext.commands.Bot)
    assert bot.settings.token == "from-dotenv"
    assert bot.settings.editor_role == "Editors"
    assert bot.settings.dev_guild == DEV_GUILD
    assert bot.library.data_dir == tmp_path / "from-env"
    assert bot.intents.message_content  # mentions and replies carry the question
    mentions = bot.allowed_mentions
    assert mentions is not None
    assert not (mentions.everyone or mentions.users or mentions.roles or mentions.replied_user)
    bot.library.close()


def test_create_bot_does_not_load_the_model(tmp_path: Path) -> None:
    code = (
        "import sys; from bot import create_bot; create_bot(); "
        "print(any(m in sys.modules for m in ('torch', 'sentence_transformers')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=clean_env(ARTICLEBOT_DATA_DIR=str(tmp_path / "data")),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_bad_dev_guild_is_refused_with_the_fix() -> None:
    with pytest.raises(Exception, match="ARTICLEBOT_DEV_GUILD must be a server id"):
        BotSettings.from_env({"ARTICLEBOT_DEV_GUILD": "my server"})


def test_every_command_has_a_description_and_described_options(tmp_path: Path) -> None:
    bot = create_bot(BotSettings(core=Settings(data_dir=tmp_path)))

    async def load() -> list[app_commands.Command]:
        for name in ("bot.cogs.ask", "bot.cogs.add", "bot.cogs.articles", "bot.cogs.admin"):
            await bot.load_extension(name)
        return [c for c in bot.tree.get_commands() if isinstance(c, app_commands.Command)]

    commands = asyncio.run(load())
    assert {c.name for c in commands} == {"ask", "add", "articles", "remove", "rebuild", "stats"}
    for command in commands:
        assert command.description and command.description != "…", command.name
        assert len(command.description) <= 100, command.name  # Discord's limit
        assert command.guild_only, command.name
        for parameter in command.parameters:
            assert parameter.description and parameter.description != "…", parameter.name
    bot.library.close()


def test_python_m_bot_without_a_token_explains_how_to_get_one(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "bot"],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "DISCORD_TOKEN is not set" in done.stderr
    assert "https://discord.com/developers/applications" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.asyncio
@pytest.mark.bot_settings(dev_guild=DEV_GUILD)
async def test_dev_guild_gets_the_commands_at_once(simcord_env: simcord.Env) -> None:
    puts = [e.path for e in simcord_env.http_requests if e.method == "PUT"]
    assert puts == [f"/applications/{simcord_env.bot.application_id}/guilds/{DEV_GUILD}/commands"]
    guild = simcord_env.create_guild("Dev", id=DEV_GUILD)
    channel = guild.create_text_channel("general")
    member = guild.add_member(simcord_env.create_user("dev"))
    assert "ask" in member.available_commands(channel)


@pytest.mark.asyncio
async def test_unchanged_commands_are_not_synced_again(
    simcord_env: simcord.Env, simcord_bot: ArticleBot, bot_library: Library
) -> None:
    def global_puts() -> int:
        return sum(
            1 for e in simcord_env.http_requests if e.method == "PUT" and "/guilds/" not in e.path
        )

    assert global_puts() == 1
    again = create_bot(replace(simcord_bot.settings), library=bot_library)
    await simcord_env.restart_bot(again)
    assert global_puts() == 1


def test_env_example_documents_every_setting_with_a_comment() -> None:
    root = Path(__file__).resolve().parents[2]
    sources = [*root.joinpath("bot").rglob("*.py"), root / "index" / "settings.py"]
    read = set()
    for source in sources:
        read |= set(re.findall(r"\b(?:ARTICLEBOT_[A-Z_]+|DISCORD_TOKEN)\b", source.read_text()))
    lines = root.joinpath(".env.example").read_text().splitlines()
    documented = {}
    for number, line in enumerate(lines):
        setting = re.match(r"(?:# )?([A-Z][A-Z0-9_]*)=", line)  # `# NAME=`: left commented out
        if setting:
            documented[setting.group(1)] = lines[number - 1]
    assert read <= set(documented), read - set(documented)
    assert all(comment.startswith("# ") for comment in documented.values())


def test_shard_settings_name_this_process_s_range(tmp_path: Path) -> None:
    env = {"ARTICLEBOT_DATA_DIR": str(tmp_path / "data"), "ARTICLEBOT_SHARD_COUNT": "8"}
    settings = BotSettings.from_env({**env, "ARTICLEBOT_SHARD_IDS": "0-2, 6"})
    assert (settings.shard_count, settings.shard_ids) == (8, [0, 1, 2, 6])
    bot = create_bot(settings)
    # still the commands.Bot a harness drives, running the shards it was given
    assert isinstance(bot, discord.AutoShardedClient) and isinstance(bot, commands.Bot)
    assert (bot.shard_count, bot.shard_ids) == (8, [0, 1, 2, 6])
    assert not isinstance(
        create_bot(BotSettings.from_env(env | {"ARTICLEBOT_SHARD_COUNT": ""})),
        discord.AutoShardedClient,
    )


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"ARTICLEBOT_SHARD_IDS": "0-3"}, "ARTICLEBOT_SHARD_COUNT"),
        ({"ARTICLEBOT_SHARD_COUNT": "4", "ARTICLEBOT_SHARD_IDS": "2-7"}, "from 0 to 3"),
        ({"ARTICLEBOT_SHARD_COUNT": "4", "ARTICLEBOT_SHARD_IDS": "one"}, "like 0-3"),
        ({"ARTICLEBOT_SHARD_COUNT": "-1"}, "whole number"),
    ],
)
def test_bad_shard_settings_say_what_to_fix(env: dict[str, str], says: str) -> None:
    with pytest.raises(ArticlebotError, match=says):
        BotSettings.from_env(env)
