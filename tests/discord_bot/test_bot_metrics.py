"""/healthz and /metrics through SimCord: the bot serves them on a real port of 127.0.0.1 while
members add and ask, and a Prometheus parser reads what it serves."""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import simcord
from bot_world import Server, make_server
from prometheus_client.parser import text_string_to_metric_families

from bot import BotSettings, create_bot
from bot.client import ArticleBot
from bot.health import HealthServer
from index import Library
from index.cli import main
from index.errors import BadInput, StorageError
from index.settings import Settings
from index.version import version

pytestmark = [pytest.mark.asyncio, pytest.mark.simcord(settle_timeout=120)]

QUESTION = "How long did the lighthouse keeper serve on the rock?"
ARTICLE = (
    "Lighthouse keeper retires\n\n"
    "The lighthouse keeper retired on Friday after forty years of service on the rock.\n\n"
    "Her daughter will keep the lamp lit until the harbor board names a successor."
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def metrics_port() -> int:
    return free_port()


@pytest.fixture
def simcord_bot(bot_library: Library, metrics_port: int) -> ArticleBot:
    settings = BotSettings(
        core=Settings(data_dir=bot_library.data_dir), metrics_address=("127.0.0.1", metrics_port)
    )
    return create_bot(settings, library=bot_library)


async def get(port: int, path: str) -> tuple[int, str, str]:
    """(status, content type, body) of a real HTTP request, made off the event loop."""

    def fetch() -> tuple[int, str, str]:
        url = f"http://127.0.0.1:{port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=20) as response:
                return response.status, response.headers["Content-Type"], response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.headers["Content-Type"], error.read().decode()

    return await asyncio.to_thread(fetch)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the text format, keyed by its name and labels, through the parser."""
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


async def test_metrics_count_questions_and_adds_without_text_or_member_ids(
    server: Server,
    simcord_bot: ArticleBot,
    metrics_port: int,
    sample_attachment: tuple[str, bytes],
    caplog: pytest.LogCaptureFixture,
) -> None:
    try:
        added = await server.admin.slash(server.channel, "add", file=sample_attachment)
        assert added.response is not None and "Added" in added.response.content
        server.add_text(ARTICLE.split("\n\n", 1)[1], title="Lighthouse keeper retires")
        with caplog.at_level(logging.INFO, logger="bot.activity"):
            asked = await server.member.slash(server.channel, "ask", question=QUESTION)
            assert asked.response is not None
            assert "forty years" in (asked.response.embeds[0].description or "")
            me = server.guild.me
            assert me is not None
            await server.member.send(server.channel, f"{me.mention} {QUESTION}")

        status, content_type, body = await get(metrics_port, "/metrics")
        assert status == 200 and content_type.startswith("text/plain")
        found = samples(body)
        assert found[("articlebot_questions_total", (("outcome", "answered"), ("via", "slash")))]
        assert found[("articlebot_questions_total", (("outcome", "answered"), ("via", "mention")))]
        assert found[("articlebot_questions_total", (("outcome", "failed"), ("via", "slash")))] == 0
        added_key = (("outcome", "added"), ("reason", ""), ("source", "file"))
        assert found[("articlebot_adds_total", added_key)] == 1
        # The latency histogram: its buckets, count and sum for each way a question comes.
        assert found[("articlebot_question_seconds_count", (("via", "slash"),))] == 1
        assert found[("articlebot_question_seconds_bucket", (("le", "+Inf"), ("via", "slash")))]
        assert found[("articlebot_question_seconds_sum", (("via", "slash"),))] > 0
        assert found[("articlebot_articles", ())] == 2
        assert found[("articlebot_collections", ())] == 1
        assert found[("articlebot_passages", ())] > 2
        assert found[("articlebot_index_memory_bytes", ())] > 0
        assert found[("articlebot_gateway_connected", ())] == 1
        # No article text, question, title or member id anywhere in what is served.
        for private in ("lighthouse", "Lighthouse", "forty years", "Homan", "Border czar"):
            assert private not in body
        for member in (server.member, server.admin):
            assert str(member.id) not in body

        # One log line per question: outcome and timing, no text (ARTICLEBOT_LOG_CONTENT unset).
        lines = [r.getMessage() for r in caplog.records if r.name == "bot.activity"]
        assert [line.split()[:3] for line in lines] == [
            ["question", "outcome=answered", "via=slash"],
            ["question", "outcome=answered", "via=mention"],
        ]
        assert all("seconds=" in line and "lighthouse" not in line for line in lines)

        release = f"articlebot {version()}\n"  # the last line of every answer
        assert await get(metrics_port, "/healthz") == (
            200,
            "text/plain; charset=utf-8",
            "ok\n" + release,
        )
        socket_ = simcord_bot.ws
        socket_.open = False  # the gateway connection drops
        try:
            status, _, reason = await get(metrics_port, "/healthz")
            _, _, body = await get(metrics_port, "/metrics")
        finally:
            socket_.open = True
        assert status == 503 and reason == "disconnected from Discord's gateway\n" + release
        assert samples(body)[("articlebot_gateway_connected", ())] == 0
        assert (await get(metrics_port, "/healthz"))[0] == 200
    finally:
        assert simcord_bot.health is not None
        await simcord_bot.health.stop()


async def test_refusals_failures_and_an_unhealthy_store_are_told_apart(
    server: Server,
    simcord_bot: ArticleBot,
    metrics_port: int,
    simcord_env: simcord.Env,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        for _ in range(3):  # no articles yet: each question is declined
            await server.member.slash(server.channel, "ask", question="Who won the regatta?")
        await server.member.slash(server.channel, "ask", question="Who won the regatta?")

        def unreachable(*args: object, **kwargs: object) -> object:
            raise StorageError("The database is not answering; try again in a minute.")

        monkeypatch.setattr(server.collection, "ask", unreachable)
        await server.admin.slash(server.channel, "ask", question="Who won the regatta?")
        await server.admin.slash(server.channel, "add", file=("notes.docx", b"not readable"))
        assert len(simcord_env.errors) == 3  # the cooldown, the database, the file: handled

        found = samples((await get(metrics_port, "/metrics"))[2])
        question = "articlebot_questions_total"
        assert found[(question, (("outcome", "declined"), ("via", "slash")))] == 3
        assert found[(question, (("outcome", "refused"), ("via", "slash")))] == 1
        assert found[(question, (("outcome", "failed"), ("via", "slash")))] == 1
        assert found[("articlebot_errors_total", (("kind", "storage_error"),))] == 1
        refused = (("outcome", "refused"), ("reason", "refused"), ("source", "file"))
        assert found[("articlebot_adds_total", refused)] == 1
        assert found[("articlebot_question_seconds_count", (("via", "slash"),))] == 5

        monkeypatch.setattr(simcord_bot.library.store, "ping", unreachable)
        monkeypatch.setattr(Library, "model_loaded", property(lambda self: False))
        status, _, reasons = await get(metrics_port, "/healthz")
        assert status == 503
        assert reasons.splitlines() == [
            "the embedding model is not loaded yet",
            "the store does not answer: The database is not answering; try again in a minute.",
            f"articlebot {version()}",
        ]
    finally:
        assert simcord_bot.health is not None
        await simcord_bot.health.stop()


async def test_a_taken_metrics_address_is_refused_in_one_sentence() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = HealthServer(None, None, None, "127.0.0.1", port)  # type: ignore[arg-type]
        with pytest.raises(BadInput) as refused:
            await server.start()
    assert str(refused.value).startswith(f"Cannot serve /metrics on 127.0.0.1:{port} (")
    assert str(refused.value).endswith("set ARTICLEBOT_METRICS_ADDRESS to a free port.")


async def test_a_follow_up_while_the_store_is_down_is_told_so_in_one_sentence(
    server: Server,
    simcord_bot: ArticleBot,
    simcord_env: simcord.Env,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    try:
        first = await server.member.slash(server.channel, "ask", question="Who won the regatta?")
        assert first.response is not None
        down = "The database is not answering; try again in a minute."

        def unreachable(*args: object, **kwargs: object) -> object:
            raise StorageError(down)

        monkeypatch.setattr(simcord_bot.conversations, "turn", unreachable)
        me = server.guild.me
        assert me is not None
        await server.member.send(server.channel, "thanks", reply_to=first.response)
        asked = await server.member.send(
            server.channel, f"{me.mention} and the year before?", reply_to=first.response
        )
        replies = [m for m in server.channel.history() if m.author.id == me.id]
        assert replies[-1].content == down and replies[-1].reference is not None
        assert replies[-1].reference.message_id == asked.id  # the chatter got no answer
        metrics = simcord_bot.telemetry.metrics.registry
        failed = {"outcome": "failed", "via": "mention"}
        assert metrics.get_sample_value("articlebot_questions_total", failed) == 1
        errors = {"kind": "storage_error"}
        assert metrics.get_sample_value("articlebot_errors_total", errors) == 2
    finally:
        assert simcord_bot.health is not None
        await simcord_bot.health.stop()


async def test_a_server_coming_online_while_the_store_is_down_is_a_log_line(
    simcord_bot: ArticleBot,
    simcord_env: simcord.Env,
    bot_library: Library,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def unreachable(*args: object, **kwargs: object) -> object:
        raise StorageError("The database is not answering; try again in a minute.")

    try:
        monkeypatch.setattr(simcord_bot.server_settings, "get", unreachable)
        with caplog.at_level(logging.WARNING, logger="bot.client"):
            make_server(simcord_env, bot_library, "Harbor")
            await simcord_env.settle()
        assert any("Could not read the settings of server" in r.message for r in caplog.records)
        errors = {"kind": "storage_error"}
        registry = simcord_bot.telemetry.metrics.registry
        assert registry.get_sample_value("articlebot_errors_total", errors) == 1
    finally:
        assert simcord_bot.health is not None
        await simcord_bot.health.stop()


async def test_metrics_tell_the_age_of_the_last_good_backup_and_a_failing_one(
    server: Server,
    simcord_bot: ArticleBot,
    metrics_port: int,
    tmp_path: Path,
) -> None:
    """The backup command notes each run in the data folder; /metrics shows the newest good
    backup's time and age (+Inf before any) and whether the last run failed."""
    data_dir = str(simcord_bot.library.data_dir)
    try:
        await server.admin.slash(server.channel, "add", file=("keeper.txt", ARTICLE.encode()))
        found = samples((await get(metrics_port, "/metrics"))[2])
        assert found[("articlebot_last_backup_age_seconds", ())] == math.inf
        assert found[("articlebot_last_backup_timestamp_seconds", ())] == 0

        def backup(dest: Path) -> int:
            return main(["backup", str(dest), "--keep", "2", "--data-dir", data_dir])

        assert await asyncio.to_thread(backup, tmp_path / "backups") == 0
        found = samples((await get(metrics_port, "/metrics"))[2])
        written = found[("articlebot_last_backup_timestamp_seconds", ())]
        assert abs(written - time.time()) < 120
        assert 0 <= found[("articlebot_last_backup_age_seconds", ())] < 120
        assert found[("articlebot_backup_failing", ())] == 0

        # a run that fails (DEST inside the data folder) leaves the good one's time as it was
        assert await asyncio.to_thread(backup, Path(data_dir) / "inside") != 0
        found = samples((await get(metrics_port, "/metrics"))[2])
        assert found[("articlebot_backup_failing", ())] == 1
        assert found[("articlebot_last_backup_timestamp_seconds", ())] == written

        assert await asyncio.to_thread(backup, tmp_path / "backups") == 0
        found = samples((await get(metrics_port, "/metrics"))[2])
        assert found[("articlebot_backup_failing", ())] == 0
        assert found[("articlebot_last_backup_timestamp_seconds", ())] >= written
    finally:
        assert simcord_bot.health is not None
        await simcord_bot.health.stop()
