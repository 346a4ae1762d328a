"""A database password, however the URL gives it (`user:pass@`, `?password=`, `&password=`, a
URL libpq cannot parse and repeats as typed), is absent from every output: each command's error,
the bot's start, log lines in both formats, an uncaught traceback, and pg_dump's command line
(which every user of the machine can read); pg_dump gets it in its environment instead.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from index.cli import main
from index.errors import StorageError, first_line
from index.logs import Redactor, configure_logging, redacting_excepthook
from index.ops.backup import backup_postgres
from index.settings import Settings, secrets_in_env

PASSWORD = "S3cret-Pw_9"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PORT = closed_port()
FORMS = {
    "user:pass@": f"postgresql://bot:{PASSWORD}@127.0.0.1:{PORT}/articles",
    "?password=": f"postgresql://bot@127.0.0.1:{PORT}/articles?password={PASSWORD}",
    "&password=": f"postgresql://bot@127.0.0.1:{PORT}/articles?sslmode=disable&password={PASSWORD}",
    "unparsable": f"postgresql://bot:{PASSWORD}@[::1:{PORT}/articles",
}


@pytest.fixture(params=sorted(FORMS))
def url(request: pytest.FixtureRequest) -> str:
    return FORMS[request.param]


@pytest.fixture(autouse=True)
def _quiet_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No `.env` of the checkout; logging and the exception hook put back afterwards."""
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("ARTICLEBOT_")] + ["DISCORD_TOKEN"]:
        monkeypatch.delenv(name, raising=False)
    root = logging.getLogger()
    handlers, level, hook = list(root.handlers), root.level, sys.excepthook
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    sys.excepthook = hook


@pytest.mark.parametrize("command", [["list"], ["stats", "--json"], ["backup", "b"]])
def test_no_command_shows_the_password(
    url: str,
    command: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", url)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # backup: no pg_dump here
    code = main(command)
    out, err = capsys.readouterr()
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1, err
    assert PASSWORD not in out + err
    if command[0] != "backup":
        assert "127.0.0.1" in err or "[::1" in err  # the rest of the URL still says where


def test_the_bot_does_not_show_it_as_it_starts(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import bot.__main__
    from bot.__main__ import main as bot_main

    # The bot waits for a database that does not answer yet (two minutes): here, a second.
    monkeypatch.setattr(bot.__main__, "DATABASE_WAIT_S", 1.0)
    monkeypatch.setattr(bot.__main__, "DATABASE_RETRY_S", 0.2)
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", url)
    monkeypatch.setenv("DISCORD_TOKEN", "not-a-real-token")
    with pytest.raises(SystemExit) as ended:
        bot_main()
    out, err = capsys.readouterr()
    assert ended.value.code == 1
    assert "Waiting for the database" in err, "the bot gave up without waiting"
    assert "database" in err and PASSWORD not in out + err


def test_an_errors_first_line_as_logs_and_the_health_page_show_it_hides_it(url: str) -> None:
    # A driver's message quotes the address it could not reach, password and all.
    error = OSError(f'connection to server at "{url}" failed: timeout\nis the server running?')
    line = first_line(error)
    assert PASSWORD not in line and line.startswith("connection to server at")
    assert "is the server running" not in line


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_no_log_line_shows_it(
    url: str, log_format: str, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings.from_env({"ARTICLEBOT_DATABASE_URL": url})
    configure_logging(
        log_format=log_format,  # type: ignore[arg-type]
        secrets=settings.secrets,
        level=logging.INFO,
    )
    log = logging.getLogger("psycopg.pool")
    log.warning("error connecting in 'pool-1': %s", url)
    log.warning(f'invalid URI query parameter: "{url}"')
    log.warning(f"host=127.0.0.1 password={PASSWORD} dbname=articles")
    log.warning(f"host=127.0.0.1 password='{PASSWORD}' dbname=articles")
    try:
        raise StorageError(f"Cannot use the database {url}")
    except StorageError:
        log.exception("the store failed")
    out = capsys.readouterr().err
    assert out.count("the store failed") == 1 and "Traceback" in out
    assert PASSWORD not in out and "127.0.0.1" in out
    if log_format == "json":
        assert all(json.loads(line) for line in out.splitlines() if line.startswith("{"))


def test_an_uncaught_traceback_does_not_show_it(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", url)
    hook = redacting_excepthook(Redactor(secrets_in_env()))
    try:
        raise RuntimeError(f"connect failed for {url} ({PASSWORD})")
    except RuntimeError as error:
        hook(RuntimeError, error, error.__traceback__)
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: connect failed for postgresql://" in err
    assert PASSWORD not in err


FAKE_PG_DUMP = """#!{python}
import json, os, sys
argv = open("/proc/self/cmdline", "rb").read().split(b"\\0")
with open(os.environ["FAKE_PG_DUMP_REPORT"], "w") as f:
    json.dump({{"cmdline": [a.decode() for a in argv], "env": os.environ.get("PGPASSWORD")}}, f)
target = [a for a in sys.argv if a.startswith("--file=")][0][len("--file="):]
open(target, "wb").write(b"PGDMP")
"""


@pytest.mark.slow  # starts pg_dump, a process
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("form", ["user:pass@", "?password=", "&password="])
def test_pg_dump_gets_it_in_its_environment_never_its_arguments(
    form: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "pg_dump").write_text(FAKE_PG_DUMP.format(python=sys.executable))
    (tools / "pg_dump").chmod(0o755)
    report = tmp_path / "report.json"
    monkeypatch.setenv("PATH", str(tools))
    monkeypatch.setenv("FAKE_PG_DUMP_REPORT", str(report))
    result = backup_postgres(FORMS[form], tmp_path / "b", lambda: {"default": (2, 5)})
    assert result.articles == 2 and (tmp_path / "b" / "articlebot.pgdump").read_bytes() == b"PGDMP"
    seen = json.loads(report.read_text())
    command_line = " ".join(seen["cmdline"])
    assert PASSWORD not in command_line and seen["env"] == PASSWORD
    assert "--dbname=postgresql://bot@127.0.0.1" in command_line
    if form == "&password=":
        assert "sslmode=disable" in command_line  # the other parameters kept
