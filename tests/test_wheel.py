"""What ships is the product: the wheel holds the bot, the core and their data, and none of what
only developers run (tools/: fitting, training, benchmarks).

The wheel is built from a copy of the checkout's sources, so that a `build/` folder left by an
earlier build (setuptools packs what it finds there) neither adds to it nor is left behind."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow  # pip builds the wheel in another process (about 2 s)

# What the product's own commands run, named here because the tools' names sit close to them:
# `articlebot bench` (index_bench, servers_bench), `articlebot eval`, `articlebot feed poll`.
PRODUCT = [
    "bot/__init__.py",
    "bot/cogs/feeds.py",
    "index/cli/bench.py",
    "index/cli/evaluate.py",
    "index/ingest/feed_polling.py",
    "index/ops/evaluate.py",
    "index/ops/eval_data.py",
    "index/ops/eval_reports.py",
    "index/ops/index_bench.py",
    "index/ops/servers_bench.py",
    "index/answers/quote-weights.json",
    "index/demo/tool-library.md",
]
# A fitting, training or benchmarking module's name, wherever it would hide in the package.
TOOL_PREFIXES = ("fit_", "train_", "reader_", "bench_")


@pytest.fixture(scope="module")
def wheel_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    source.mkdir()
    for item in ROOT.iterdir():
        if item.is_file():  # pyproject.toml, README.md, LICENSE: what the metadata reads
            shutil.copy2(item, source / item.name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    # tools/ travels too: the wheel must leave it out, not merely not find it.
    for package in ("index", "bot", "tools"):
        shutil.copytree(ROOT / package, source / package, ignore=ignore)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation"]
        + ["--quiet", "-w", str(work / "dist")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    [wheel] = (work / "dist").glob("articlebot-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_the_wheel_holds_no_fitting_training_or_benchmark_module(wheel_files: list[str]) -> None:
    top = {name.split("/")[0] for name in wheel_files}
    assert {name for name in top if not name.endswith(".dist-info")} == {"bot", "index"}
    tools = {path.name for path in (ROOT / "tools").glob("*.py")} - {"__init__.py"}
    assert tools, "tools/ holds the developers' modules"
    found = [
        name
        for name in wheel_files
        if name.startswith("index/")
        and (
            "bench" in name.split("/")[:-1]  # a bench package
            or name.rsplit("/", 1)[-1].startswith(TOOL_PREFIXES)
            or name.rsplit("/", 1)[-1] in tools
        )
    ]
    assert found == []


def test_the_wheel_holds_the_product_and_its_data(wheel_files: list[str]) -> None:
    assert [path for path in PRODUCT if path not in wheel_files] == []
    shipped = {name for name in wheel_files if name.startswith(("index/", "bot/"))}
    # Every file of the two packages, its data as much as its code: a catalogue or a rules file
    # the package reads and the wheel leaves out is an installed bot that cannot start.
    sources = {
        str(path.relative_to(ROOT))
        for package in ("index", "bot")
        for path in (ROOT / package).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    assert sources - shipped == set()
    assert "index/messages/locales.json" in shipped
