"""`articlebot backup DIR --keep N`, as a daily timer runs it: each run adds a dated backup to
DIR, the oldest beyond N go, nothing that the command did not make is touched, and the newest
restores into a folder that answers. Runs killed part way (SIGKILL, SIGTERM) leave nothing that
the next run does not remove: after it, DIR holds finished backups alone.

The articles are embedded by the test embedder (tests/fakes.py): what is checked is which
folders are kept and that the kept one is whole, not answer quality.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import HashingTestEmbedder
from fault_tools import ARTICLEBOT, SQUAD_EXCERPT

from index import Library
from index.cli import main
from index.ingest.readers import read_text
from index.ops.manifest import read_manifest
from index.ops.retention import DATED_NAME, remove_leftovers
from index.storage.locking import file_lock, sole_lock


@pytest.fixture(autouse=True)
def _no_settings_from_outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("ARTICLEBOT_DATABASE_URL", "ARTICLEBOT_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)


def library(data_dir: Path) -> Library:
    return Library(data_dir, embedder=HashingTestEmbedder())  # type: ignore[arg-type]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A data folder with three SQuAD excerpt articles."""
    data_dir = tmp_path / "source"
    lib = library(data_dir)
    for entry in json.loads(SQUAD_EXCERPT.read_text(encoding="utf-8"))["articles"][:3]:
        text = "\n\n".join(entry["paragraphs"])
        lib.collection().add(read_text(text, title=entry["title"].replace("_", " ")))
    lib.close()
    return data_dir


def keep(capsys: pytest.CaptureFixture[str], folder: Path, n: int, source: Path) -> dict:
    code = main(["backup", str(folder), "--keep", str(n), "--data-dir", str(source), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_three_runs_keep_two_and_the_newest_restores_and_answers(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    reports = [keep(capsys, folder, 2, source) for _ in range(3)]

    made = [Path(r["backup"]) for r in reports]
    assert len(set(made)) == 3, "each run writes a backup of its own"
    assert all(p.parent == folder and DATED_NAME.fullmatch(p.name) for p in made)
    assert reports[0]["removed"] == [] and reports[1]["removed"] == []
    assert reports[2]["removed"] == [str(made[0])], "the oldest goes, once there are three"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith(".")) == sorted(
        p.name for p in made[1:]
    )
    assert reports[2]["articles"] == 3 and reports[2]["kept"] == 2

    target = tmp_path / "restored"
    code = main(["restore", str(made[2]), "--data-dir", str(target), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out)["articles"] == 3
    restored = library(target)
    try:
        titles = {a.title for a in restored.collection().articles()}
        question = json.loads(SQUAD_EXCERPT.read_text(encoding="utf-8"))["articles"][0]
        answer = restored.collection().ask(question["question"])
    finally:
        restored.close()
    assert len(titles) == 3
    assert answer.citations, "the restored folder answers from its articles"


def test_only_the_backups_it_made_are_removed(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    # What an operator keeps beside the timer's backups: none of it is the command's to remove.
    (folder / "before-upgrade").mkdir()
    (folder / "before-upgrade" / "manifest.json").write_text("{}")
    look_alike = folder / "articlebot-20000101T000000Z"  # the name, but no backup inside
    look_alike.mkdir()
    (look_alike / "notes.txt").write_text("mine")
    (folder / "articlebot-19990101T000000Z").write_text("a file, not a folder")
    elsewhere = tmp_path / "elsewhere"
    first = Path(keep(capsys, folder, 1, source)["backup"])
    first.rename(elsewhere)
    (folder / "articlebot-20010101T000000Z").symlink_to(elsewhere)  # a link to a real backup

    for _ in range(3):
        report = keep(capsys, folder, 1, source)
    assert report["kept"] == 1, report
    assert (look_alike / "notes.txt").read_text() == "mine"
    assert (folder / "before-upgrade" / "manifest.json").exists()
    assert (folder / "articlebot-19990101T000000Z").is_file()
    assert (elsewhere / "manifest.json").exists(), "a link is not followed into"
    assert (folder / "articlebot-20010101T000000Z").is_symlink()
    dated = [p for p in folder.iterdir() if DATED_NAME.fullmatch(p.name) and p.is_dir()]
    assert sorted(p.name for p in dated if not p.is_symlink()) == sorted(
        [look_alike.name, Path(report["backup"]).name]
    )


def test_a_failed_backup_removes_nothing(
    tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    keep(capsys, folder, 1, source)
    before = sorted(p.name for p in folder.iterdir())
    code = main(["backup", str(folder), "--keep", "1", "--data-dir", str(tmp_path / "nothing")])
    _, err = capsys.readouterr()
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1
    assert sorted(p.name for p in folder.iterdir()) == before


def test_keep_must_be_a_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        main(["backup", str(tmp_path / "b"), "--keep", "0"])
    assert exit.value.code == 2
    assert "choose a number from 1 up" in capsys.readouterr().err


@contextlib.contextmanager
def indexes_held(data_dir: Path) -> Iterator[None]:
    """The lock each collection's index saves take, held as a bot saving its index holds it:
    a backup copies the databases, then waits here before it copies the indexes, with a whole
    copy of the store in its staging folder."""
    with contextlib.ExitStack() as held:
        for faiss_file in sorted((data_dir / "indexes").glob("*.faiss")):
            held.enter_context(file_lock(faiss_file.with_suffix(".lock")))
        yield


def start_keep(folder: Path, source: Path) -> subprocess.Popen[str]:
    """`articlebot backup FOLDER --keep 2`, a process of its own, as the timer starts it."""
    env = {k: v for k, v in os.environ.items() if k not in ("ARTICLEBOT_DATABASE_URL",)}
    return subprocess.Popen(
        [*ARTICLEBOT, "backup", str(folder), "--keep", "2", "--data-dir", str(source)],
        env=env,
        cwd=folder.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def staging_of(process: subprocess.Popen[str], folder: Path) -> Path:
    """The staging folder `process` writes, once it holds the store's copy and waits on the
    indexes' lock."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        for path in folder.glob(f".articlebot-*.partial-{process.pid}"):
            if (path / "indexes").is_dir() and (path / "articlebot.db").stat().st_size > 0:
                return path
        time.sleep(0.05)
    raise AssertionError("the backup never reached its indexes")


@pytest.mark.slow  # five processes of the command line
def test_killed_runs_leave_nothing_the_next_run_does_not_remove(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    first = Path(keep(capsys, folder, 2, source)["backup"])
    with indexes_held(source):
        for _ in range(2):  # SIGKILL: nothing runs on the way out
            process = start_keep(folder, source)
            staging = staging_of(process, folder)
            process.kill()
            process.communicate(timeout=60)
            assert staging.is_dir(), "a killed run leaves its copy"
        leftovers = sorted(p.name for p in folder.iterdir() if p.name.startswith("."))
        assert any(".partial-" in n for n in leftovers) and any(
            n.endswith(".lock") for n in leftovers
        ), leftovers

        process = start_keep(folder, source)  # SIGTERM: the run removes what it wrote
        staging = staging_of(process, folder)
        own_lock = folder / f"{staging.name.partition('.partial-')[0]}.lock"
        assert own_lock.exists()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 128 + signal.SIGTERM, err
        assert err.startswith("error: The backup was stopped (SIGTERM)") and err.count("\n") == 1
        assert not staging.exists() and not own_lock.exists()

    last = Path(keep(capsys, folder, 2, source)["backup"])
    assert sorted(folder.iterdir()) == sorted([first, last]), sorted(folder.iterdir())
    for backup in (first, last):
        assert read_manifest(backup).collections


def test_only_leftovers_whose_writer_is_gone_are_removed(tmp_path: Path) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    dead = folder / ".articlebot-20260101T000000Z.partial-123"
    (dead / "indexes").mkdir(parents=True)
    (folder / ".articlebot-20260101T000000Z.lock").touch()
    (folder / ".articlebot-20260101T000001Z.lock").touch()  # a lock alone, its folder renamed
    alive = folder / ".articlebot-20260101T000002Z.partial-456"
    alive.mkdir()
    look_alike = folder / ".articlebot-notes.partial-1"
    look_alike.mkdir()
    with sole_lock(folder / ".articlebot-20260101T000002Z.lock"):  # its writer runs
        removed = remove_leftovers(folder)
        assert alive.is_dir() and (folder / ".articlebot-20260101T000002Z.lock").exists()
    assert sorted(p.name for p in removed) == [
        ".articlebot-20260101T000000Z.lock",
        ".articlebot-20260101T000000Z.partial-123",
        ".articlebot-20260101T000001Z.lock",
    ]
    assert sorted(p.name for p in folder.iterdir()) == [alive.name, look_alike.name]
