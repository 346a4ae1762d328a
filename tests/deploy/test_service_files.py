"""The files operators run the bot with, read as their tools read them: the systemd units pass
`systemd-analyze verify` and restart the bot on failure but not on a configuration error's exit
code; compose.yaml runs the bot beside a health-checked PostgreSQL, each with a restart policy
and a named volume, with no secret written in it; both compose files confine the bot as the
unit does, as far as compose can say it.
"""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from containers import ROOT

UNITS = ROOT / "deploy" / "systemd"


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read(UNITS / name)
    return parser


@pytest.mark.slow  # runs systemd-analyze
def test_the_units_pass_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze (Debian's systemd package) checks the units"
    done = subprocess.run(
        [analyze, "verify", *sorted(str(p) for p in UNITS.iterdir())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def test_the_bot_restarts_on_failure_but_not_on_a_configuration_error() -> None:
    from bot.__main__ import CONFIGURATION_ERROR

    service = unit("articlebot.service")["Service"]
    assert service["Restart"] == "on-failure" and int(service["RestartSec"]) > 0
    assert service["RestartPreventExitStatus"] == str(CONFIGURATION_ERROR)
    assert service["User"] == "articlebot" and service["EnvironmentFile"]
    assert service["NoNewPrivileges"] == "yes" and service["ProtectSystem"] == "strict"
    assert service["ProtectHome"] == "yes" and service["PrivateTmp"] == "yes"
    # What the bot may write is what the command line points it at.
    writable = set(service["ReadWritePaths"].split())
    pointed = set(re.findall(r"ARTICLEBOT_(?:DATA_DIR|MODEL_CACHE)=(\S+)", service["ExecStart"]))
    assert pointed == writable == {"/var/lib/articlebot", "/var/cache/articlebot"}


def test_the_backup_timer_keeps_a_week_of_daily_backups() -> None:
    timer = unit("articlebot-backup.timer")["Timer"]
    assert timer["OnCalendar"] and timer["Persistent"] == "true"
    service = unit("articlebot-backup.service")["Service"]
    assert re.search(r"articlebot backup \S+ --keep \d+", service["ExecStart"])


def test_compose_runs_the_bot_beside_a_health_checked_database() -> None:
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services, volumes = compose["services"], compose["volumes"]
    assert set(services) == {"bot", "db"}
    for service in services.values():
        assert service["restart"] == "unless-stopped"
        assert service["logging"]["options"]["max-size"]
        for mount in service["volumes"]:
            assert mount.split(":")[0] in volumes, f"{mount} is not a named volume"
    assert "pg_isready" in " ".join(services["db"]["healthcheck"]["test"])
    assert services["bot"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert services["bot"]["env_file"] == ".env"
    assert "@db:" in services["bot"]["environment"]["ARTICLEBOT_DATABASE_URL"]
    # The password comes from .env, never written here.
    assert services["db"]["environment"]["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD")
    url = services["bot"]["environment"]["ARTICLEBOT_DATABASE_URL"]
    assert re.fullmatch(r"postgresql://articlebot:\$\{POSTGRES_PASSWORD[^}]*\}@db:5432/\w+", url)

    small = yaml.safe_load((ROOT / "compose.sqlite.yaml").read_text())
    assert set(small["services"]) == {"bot"}
    assert small["services"]["bot"]["environment"]["ARTICLEBOT_DATABASE_URL"] == ""


def image_env() -> dict[str, str]:
    """The settings the Dockerfile's ENV lines give the image."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            found |= dict(re.findall(r"(\w+)=(\S+)", line))
    return found


def env_file(text: str) -> dict[str, str]:
    """An env file as `docker run --env-file` and compose's `env_file:` read it: `NAME=value`
    lines, the value as written; `#` lines are comments."""
    found = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            name, _, value = line.partition("=")
            found[name.strip()] = value
    return found


def test_the_dot_env_the_docs_make_keeps_the_images_own_settings() -> None:
    """`cp .env.example .env`, the token filled in, passed whole to the container: every line
    of it replaces the image's ENV of the same name, an empty one too. So none may name a
    setting the image sets, and the bot in the container reads the image's data folder, model
    cache and health address. tests/deploy/test_image.py and test_compose.py run the image
    with this file."""
    from bot.config import BotSettings

    image = image_env()
    assert {"ARTICLEBOT_DATA_DIR", "ARTICLEBOT_MODEL_CACHE", "ARTICLEBOT_METRICS_ADDRESS"} <= set(
        image
    )
    dot_env = env_file(
        (ROOT / ".env.example").read_text().replace("DISCORD_TOKEN=\n", "DISCORD_TOKEN=t\n")
    )
    assert dot_env["DISCORD_TOKEN"] == "t"
    overridden = sorted(set(image) & set(dot_env))
    assert not overridden, f".env.example sets what the image sets: {overridden}"
    settings = BotSettings.from_env({**image, **dot_env})
    assert settings.core.data_dir == Path("/data")
    assert settings.core.model_cache == Path("/opt/articlebot/models")
    assert settings.metrics_address == ("127.0.0.1", 8080)
    # systemd's EnvironmentFile= would win over the unit's Environment= as well: the unit sets
    # the data folder and the model cache on its command line, and the file leaves them out.
    for name in ("ARTICLEBOT_DATA_DIR", "ARTICLEBOT_MODEL_CACHE"):
        assert name not in dot_env


def test_every_unit_that_declares_the_data_folder_keeps_it_private() -> None:
    """systemd sets the mode of a StateDirectory= at each start of each unit that declares
    it, 0755 unless told: the backup unit, run every night, reopened the bot unit's 0700."""
    declaring = {}
    for path in sorted(UNITS.glob("*.service")):
        service = unit(path.name)["Service"]
        if "StateDirectory" in service:
            declaring[path.name] = service.get("StateDirectoryMode")
    assert set(declaring) == {"articlebot.service", "articlebot-backup.service"}
    assert set(declaring.values()) == {"0700"}, declaring


def seconds(span: str) -> float:
    """A systemd time span (`2h`, `90min 30s`) in seconds."""
    units = {"h": 3600, "min": 60, "s": 1, "ms": 0.001}
    parts = re.findall(r"(\d+)\s*(h|min|ms|s)\b", span)
    assert parts and "".join(n + u for n, u in parts) == span.replace(" ", ""), span
    return sum(int(n) * units[u] for n, u in parts)


def test_the_backup_unit_is_bounded_in_time_beyond_the_dumps_own_bound() -> None:
    """A oneshot has no start timeout unless given one: a hung backup would stay "activating"
    for good. Its bound lies past pg_dump's own (`backup --timeout`), so that the command's
    sentence about pg_dump, not systemd's timeout, is what a stuck dump logs."""
    from index.ops.backup import PG_DUMP_TIMEOUT_S

    service = unit("articlebot-backup.service")["Service"]
    assert service["Type"] == "oneshot"
    bound = seconds(service["TimeoutStartSec"])
    assert PG_DUMP_TIMEOUT_S < bound <= 24 * 3600, bound  # and within a day: the next run's


def test_an_error_no_restart_mends_stops_the_bot_under_systemd_and_under_compose() -> None:
    """systemd restarts on any exit code but the one named in RestartPreventExitStatus=; a
    compose restart policy knows no code but zero (`on-failure` restarts every other,
    `unless-stopped` every exit, and `on-failure` leaves a container that exited 0 down after
    a reboot), so under compose the bot waits instead of exiting (bot/__main__.py)."""
    from bot.__main__ import CONFIGURATION_ERROR

    service = unit("articlebot.service")["Service"]
    assert service["RestartPreventExitStatus"] == str(CONFIGURATION_ERROR)
    for name in ("compose.yaml", "compose.sqlite.yaml"):
        bot = yaml.safe_load((ROOT / name).read_text())["services"]["bot"]
        assert bot["restart"] == "unless-stopped", name  # a crash and a reboot bring it back
        assert bot["environment"]["ARTICLEBOT_ON_PERMANENT_ERROR"] == "wait", name


@pytest.mark.parametrize("name", ["compose.yaml", "compose.sqlite.yaml"])
def test_compose_confines_the_bot_as_the_unit_does(name: str) -> None:
    """The unit's NoNewPrivileges=, empty CapabilityBoundingSet=, ProtectSystem=strict with
    the data folder writable and PrivateTmp=, said in compose's words, and a memory limit
    (tests/deploy/test_compose.py and test_image.py run the image so confined)."""
    service = unit("articlebot.service")["Service"]
    assert service["NoNewPrivileges"] == "yes" and service["CapabilityBoundingSet"] == ""
    assert service["ProtectSystem"] == "strict" and service["PrivateTmp"] == "yes"
    bot = yaml.safe_load((ROOT / name).read_text())["services"]["bot"]
    assert bot["security_opt"] == ["no-new-privileges:true"]
    assert bot["cap_drop"] == ["ALL"] and "cap_add" not in bot
    assert bot["read_only"] is True
    assert [mount.split(":")[1] for mount in bot["volumes"]] == ["/data"]
    assert [mount.split(":")[0] for mount in bot["tmpfs"]] == ["/tmp"]
    assert re.fullmatch(r"\d+g", str(bot["mem_limit"])), bot["mem_limit"]
    # The same limit in both: the one compose.yaml says how it was chosen.
    default = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["bot"]
    assert bot["mem_limit"] == default["mem_limit"]
