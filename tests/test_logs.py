"""Logs an operator can use: one line per question and add, text or JSON, and no secret (the
Discord token, the database password) in any line, whoever logged it and however."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import BotSettings
from index.cli import main
from index.errors import BadInput
from index.library import Library
from index.logs import configure_logging, log_event
from index.settings import Settings

TOKEN = "MTE4NDk5.GxYz12.tok3n-Sekrit_value"
PASSWORD = "pa$$/w0rd@x"  # percent-encoded in the URL, as a password with such characters is
URL = "postgresql://articlebot:pa%24%24%2Fw0rd%40x@db.internal:5432/articles"


@pytest.fixture
def settings() -> BotSettings:
    return BotSettings.from_env(
        {"DISCORD_TOKEN": TOKEN, "ARTICLEBOT_DATABASE_URL": URL, "ARTICLEBOT_DATA_DIR": "d"}
    )


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def log_everything(secret_holder: BotSettings) -> None:
    """Every way a secret could reach a line: the message, its arguments, a traceback, a URL,
    discord.py's and psycopg's loggers."""
    logging.getLogger("bot").info("Logging in with %s", TOKEN)
    logging.getLogger("discord.http").warning(f"token {TOKEN} refused")
    logging.getLogger("index.storage.postgres").info("Connecting to %s", URL)
    logging.getLogger("psycopg.pool").warning("error connecting to %s (password %s)", URL, PASSWORD)
    logging.getLogger("x").info("another https://user:hunter2@example.com/feed.xml")
    try:
        raise RuntimeError(f"connect failed for {secret_holder.core.database_url}")
    except RuntimeError:
        logging.getLogger("bot.cogs.ask").exception("Error answering (token=%s)", TOKEN)


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_token_or_database_password_in_any_line(
    settings: BotSettings, log_format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_logging(
        log_format=log_format,  # type: ignore[arg-type]
        secrets=settings.secrets,
        level=logging.INFO,
    )
    log_everything(settings)
    out = capsys.readouterr().err
    assert out.count("\n") >= 6
    for secret in (TOKEN, PASSWORD, "pa%24%24%2Fw0rd%40x", "pa$$", "hunter2"):
        assert secret not in out
    assert "***" in out and "db.internal:5432/articles" in out  # the rest stays readable
    assert "Traceback" in out and "RuntimeError" in out
    if log_format == "json":
        lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert {line["logger"] for line in lines} >= {"bot", "discord.http", "psycopg.pool"}
        assert any("exception" in line for line in lines)


def test_one_line_per_event_without_content_unless_asked(
    capsys: pytest.CaptureFixture[str],
) -> None:
    events = logging.getLogger("bot.activity")
    fields = {"outcome": "answered", "via": "slash", "guild": 7, "seconds": 0.1234}
    question = {"question": "Who is the harbor master?"}

    configure_logging(log_format="json", level=logging.INFO)
    log_event(events, "question", fields, content=question)
    (line,) = capsys.readouterr().err.splitlines()
    record = json.loads(line)
    assert record["event"] == "question" and record["outcome"] == "answered"
    assert record["seconds"] == 0.1234 and "question" not in record
    assert record["message"] == "question outcome=answered via=slash guild=7 seconds=0.123"

    configure_logging(log_format="text", content=True, level=logging.INFO)
    log_event(events, "question", fields, content=question)
    (text,) = capsys.readouterr().err.splitlines()
    assert text.endswith('seconds=0.123 question="Who is the harbor master?"')


def test_a_second_configuration_replaces_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging(level=logging.INFO)
    configure_logging(level=logging.INFO, secrets=[TOKEN])
    logging.getLogger("bot").info("once %s", TOKEN)
    assert capsys.readouterr().err.count("once ***") == 1


def test_settings_for_logs_and_metrics(settings: BotSettings) -> None:
    assert set(settings.secrets) == {TOKEN, "pa%24%24%2Fw0rd%40x"}
    assert settings.metrics_address is None
    env = {"ARTICLEBOT_METRICS_ADDRESS": "127.0.0.1:9464", "ARTICLEBOT_LOG_FORMAT": "JSON"}
    parsed = BotSettings.from_env(env)
    assert parsed.metrics_address == ("127.0.0.1", 9464)
    assert parsed.core.log_format == "json" and not parsed.core.log_content
    assert BotSettings.from_env({"ARTICLEBOT_METRICS_ADDRESS": "[::1]:80"}).metrics_address == (
        "::1",
        80,
    )
    for bad in ("9464", "localhost:", "host:99999", "host:port"):
        with pytest.raises(BadInput, match="ARTICLEBOT_METRICS_ADDRESS must be host:port"):
            BotSettings.from_env({"ARTICLEBOT_METRICS_ADDRESS": bad})
    with pytest.raises(BadInput, match="ARTICLEBOT_LOG_FORMAT must be text or json"):
        Settings.from_env({"ARTICLEBOT_LOG_FORMAT": "xml"})
    with pytest.raises(BadInput, match="ARTICLEBOT_LOG_LEVEL must be one of"):
        Settings.from_env({"ARTICLEBOT_LOG_LEVEL": "loud"})
    assert Settings.from_env({"ARTICLEBOT_LOG_LEVEL": "debug"}).log_level == logging.DEBUG


def test_env_example_lists_the_new_settings() -> None:
    listed = (Path(__file__).parents[1] / ".env.example").read_text()
    for key in (
        "ARTICLEBOT_METRICS_ADDRESS",
        "ARTICLEBOT_LOG_FORMAT",
        "ARTICLEBOT_LOG_LEVEL",
        "ARTICLEBOT_LOG_CONTENT",
    ):
        assert f"\n{key}=" in listed or f"\n# {key}=" in listed


def test_stats_json_carries_the_counts_metrics_show(
    test_library: Library, capsys: pytest.CaptureFixture[str]
) -> None:
    test_library.collection("other").add_text("Ferries run every hour.\n\nThe pier is new.")
    test_library.collection().add_text("The mayor spoke.\n\nThe council voted.", title="News")
    assert main(["stats", "--json"], library=test_library) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["articles"] == 1 and stats["feeds"] == 0  # this collection's, as before
    assert stats["collections"] == 2 and stats["total_articles"] == 2
    assert stats["total_passages"] > stats["passages"] >= 2
    assert stats["index_memory_bytes"] > 0


def test_cli_logs_one_line_per_question_and_add_at_info(
    test_library: Library, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    configure_logging(level=logging.INFO, text_format="%(message)s")
    article = tmp_path / "news.txt"
    article.write_text("Harbor news\n\nThe mayor spoke.\n\nThe council voted.")
    assert main(["add", str(article), str(tmp_path / "missing.txt")], library=test_library) == 1
    assert main(["ask", "Who spoke?"], library=test_library) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line]
    added, refused = [line for line in lines if line.startswith("add ")]
    assert added.startswith("add source=cli collection=default outcome=added article=")
    assert refused.startswith("add source=cli collection=default outcome=refused reason=")
    (question,) = [line for line in lines if line.startswith("question ")]
    assert question.startswith("question outcome=") and "via=cli collection=default" in question
    for line in (added, question):
        assert "seconds=" in line and "Who spoke" not in line and "Harbor news" not in line


def test_the_command_line_process_logs_json_without_the_database_password(
    tmp_path: Path, database_url: str
) -> None:
    # The test server trusts its socket: a password in the URL is accepted and never checked.
    with_password = database_url.replace("postgres:@", "postgres:Sup3r-s3cret@")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")}
    env.update(
        ARTICLEBOT_DATA_DIR=str(tmp_path / "data"),
        ARTICLEBOT_DATABASE_URL=with_password,
        ARTICLEBOT_LOG_FORMAT="json",
        ARTICLEBOT_LOG_LEVEL="debug",
        HF_HUB_OFFLINE="1",
    )
    done = subprocess.run(
        [sys.executable, "-m", "index", "stats", "--json"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["collections"] == 0
    lines = [json.loads(line) for line in done.stderr.splitlines() if line.strip()]
    assert any(line["logger"] == "index.storage.postgres" for line in lines)
    assert "Sup3r-s3cret" not in done.stderr
