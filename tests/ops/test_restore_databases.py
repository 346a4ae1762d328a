"""A restored database is held to this release's own schema before it is accepted: a trigger, a
view, an extra table or index, a CHECK, a column less, another `user_version` or a file left in
WAL mode is refused in one sentence, within seconds, nothing left behind; every query on a
restored file is bounded in time. And around the restore: one at a time per folder, the staging
folders of killed runs cleaned, a backup into the data folder refused.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_backups import library, manifest_of, refused, reseal, write_manifest

from index.cli import main
from index.errors import StorageError
from index.storage.locking import sole_lock
from index.storage.sqlite_backup import collection_counts
from index.storage.sqlite_schema import upgrade
from index.storage.tables import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"


def tamper(work: Path, *statements: str, name: str = "articlebot.db") -> None:
    """Run `statements` on the backup's copy of `name`, then seal it into the manifest."""
    path = work / "backup" / name
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        for statement in statements:
            db.execute(statement)
    reseal(work / "backup", name)


@pytest.mark.parametrize(
    ("statements", "said"),
    [
        (
            [
                "CREATE TABLE loot (text TEXT)",
                "CREATE TRIGGER steal AFTER INSERT ON passages "
                "BEGIN INSERT INTO loot VALUES (new.text); END",
            ],
            "trigger or view (steal)",
        ),
        (
            ["CREATE TRIGGER wipe AFTER INSERT ON articles BEGIN DELETE FROM passages; END"],
            "trigger or view (wipe)",
        ),
        (["CREATE TABLE notes (x TEXT)"], "notes, which this release does not declare"),
        (["CREATE VIEW endless AS " + ENDLESS], "trigger or view (endless)"),
        (
            [
                "PRAGMA foreign_keys=OFF",
                "ALTER TABLE feeds RENAME TO old_feeds",
                "CREATE VIEW feeds AS SELECT * FROM old_feeds",
            ],
            "trigger or view (feeds)",
        ),
        (["CREATE INDEX by_title ON articles(lower(title))"], "by_title"),
        (
            ["DROP INDEX articles_url", "CREATE INDEX articles_url ON articles(lower(url))"],
            "index articles_url defined otherwise",
        ),
        (["ALTER TABLE articles DROP COLUMN language"], "table articles defined otherwise"),
        (["PRAGMA user_version=5"], f"schema version 5, where its manifest says {SCHEMA_VERSION}"),
        (["PRAGMA journal_mode=WAL"], "WAL mode"),
        (
            [
                "PRAGMA writable_schema=ON",
                "UPDATE sqlite_master SET sql = replace(sql, 'checked_at TEXT', "
                "'checked_at TEXT CHECK (length(checked_at) < 99)') WHERE name = 'feeds'",
            ],
            "CHECK in its schema",
        ),
    ],
)
def test_a_store_other_than_declared_is_refused(
    work: Path, capsys: pytest.CaptureFixture[str], statements: list[str], said: str
) -> None:
    tamper(work, *statements)
    err = refused(work, capsys)
    assert "articlebot.db" in err and said in err, err


def test_the_bot_databases_are_held_to_their_schema_too(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tamper(
        work,
        "CREATE TRIGGER spy AFTER INSERT ON settings BEGIN DELETE FROM settings; END",
        name="settings.db",
    )
    assert "settings.db holds a trigger or view (spy)" in refused(work, capsys)


def test_a_manifest_that_states_another_schema_version_is_refused(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = manifest_of(work / "backup")
    manifest["schema_version"] = 5
    write_manifest(work / "backup", manifest)
    assert f"schema version {SCHEMA_VERSION}, where its manifest says 5" in refused(work, capsys)


def test_an_older_release_backup_restores_and_is_brought_up_to_date(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store at schema version 5, as an older articlebot wrote it, is its version's schema:
    restored, then upgraded as the store always upgrades an older file."""
    old = work / "old"
    old.mkdir()
    with contextlib.closing(sqlite3.connect(old / "articlebot.db", isolation_level=None)) as db:
        upgrade(db, 0, 5)
    manifest = manifest_of(work / "backup")
    manifest.update(schema_version=5, collections={}, tables={}, files={})
    write_manifest(old, manifest)
    reseal(old, "articlebot.db")
    code = main(["restore", str(old), "--data-dir", str(work / "new")])
    out, err = capsys.readouterr()
    assert code == 0, err
    with contextlib.closing(sqlite3.connect(work / "new" / "articlebot.db")) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_every_query_on_a_restored_file_is_bounded_in_time(tmp_path: Path) -> None:
    """Were a view over an endless query ever read, it is interrupted, in one sentence."""
    path = tmp_path / "articlebot.db"
    with contextlib.closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute(f"CREATE VIEW articles AS SELECT 'c' AS collection FROM ({ENDLESS})")
        db.execute("CREATE VIEW passages AS SELECT 'c' AS collection")
    started = time.monotonic()
    with pytest.raises(StorageError, match=r"took longer than 0 s.*restore from another backup"):
        collection_counts(path, seconds=0.3)
    assert time.monotonic() - started < 3


# around the restore: the lock, killed runs, the data folder


def test_a_restore_under_way_refuses_a_second(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sole_lock(work / ".new.lock"):
        err = refused(work, capsys)
    assert "Another restore into" in err and "under way" in err
    assert main(["restore", str(work / "backup"), "--data-dir", str(work / "new")]) == 0
    assert not (work / ".new.lock").exists()


def test_a_killed_restore_leaves_nothing_past_the_next(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = work / ".new.partial-999999"
    (stale / "indexes").mkdir(parents=True)
    (stale / "articlebot.db").write_bytes(b"half")
    assert main(["restore", str(work / "backup"), "--data-dir", str(work / "new")]) == 0
    assert sorted(p.name for p in work.iterdir()) == [
        "backup",
        "data",
        "new",
        "outside.txt",
    ]


def test_a_backup_into_the_data_folder_or_under_a_file_is_refused(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for dest in (work / "data", work / "data" / "backups" / "today", work / "outside.txt" / "b"):
        code = main(["backup", str(dest), "--data-dir", str(work / "data")])
        out, err = capsys.readouterr()
        assert code == 1 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
        assert str(dest) in err and ".partial" not in err
    assert not (work / "data" / "backups").exists()
    assert (work / "outside.txt").read_text() == "keep me\n"


@pytest.mark.slow
def test_two_restores_into_one_folder_give_one_whole_copy(work: Path) -> None:
    """Started together: one restores, the other is refused, and the folder answers as the
    backup's source does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")}
    env["PYTHONPATH"] = str(ROOT)
    other = work / "other"
    assert main(["backup", str(other), "--data-dir", str(work / "data")]) == 0
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "index.cli", "restore", str(src), "--data-dir", "new", "--json"],
            cwd=work,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for src in (work / "backup", other)
    ]
    done = [(run.wait(timeout=120), *run.communicate()) for run in runs]
    codes = sorted(code for code, _, _ in done)
    assert codes == [0, 1], done
    (refusal,) = [err for code, _, err in done if code == 1]
    assert refusal.count("\n") == 1 and ("under way" in refusal or "not empty" in refusal)
    (report,) = [json.loads(out) for code, out, _ in done if code == 0]
    assert report["articles"] == 3
    original, copy = library(work / "data"), library(work / "new")
    try:
        for question in ("When will the pier open?", "Who approved the repairs?"):
            expected = original.collection().ask(question).to_json()
            assert copy.collection().ask(question).to_json() == expected
    finally:
        original.close()
        copy.close()
    assert not list(work.glob(".new*"))


def test_a_bot_database_from_before_an_index_was_declared_restores(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bot's databases make what they lack when opened: a file without a later index is
    whole, and gets it at the bot's next start."""
    from index.storage.conversations import Conversations

    conversations = Conversations.in_folder(work / "data")
    conversations.close()
    with contextlib.closing(sqlite3.connect(work / "data" / "conversations.db")) as db:
        db.execute("DROP INDEX turns_by_age")
    assert main(["backup", str(work / "older"), "--data-dir", str(work / "data")]) == 0
    assert main(["restore", str(work / "older"), "--data-dir", str(work / "new")]) == 0
    restored = Conversations.in_folder(work / "new")
    restored.close()
    with contextlib.closing(sqlite3.connect(work / "new" / "conversations.db")) as db:
        names = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
    assert "turns_by_age" in names


def test_an_index_file_other_than_a_flat_one_is_built_again_not_read(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """FAISS's reader is not safe against a crafted file: a backup's index file is never read,
    but built again from the restored store, the very file the source holds, which answers as
    the source."""
    (faiss_file,) = (work / "backup" / "indexes").glob("*.faiss")
    faiss_file.write_bytes(b"IxM2" + os.urandom(4096))
    reseal(work / "backup", f"indexes/{faiss_file.name}")
    assert main(["restore", str(work / "backup"), "--data-dir", str(work / "new")]) == 0
    for name in (faiss_file.name, faiss_file.with_suffix(".json").name):
        restored = (work / "new" / "indexes" / name).read_bytes()
        assert restored == (work / "data" / "indexes" / name).read_bytes(), name
    original, copy = library(work / "data"), library(work / "new")
    try:
        question = "When will the pier open?"
        assert (
            copy.collection().ask(question).to_json()
            == original.collection().ask(question).to_json()
        )
    finally:
        original.close()
        copy.close()


def test_a_keyword_index_whose_arrays_do_not_fit_together_is_built_again(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Postings that point past the passages would fail every question: the saved keyword
    index is built again instead, and the copy answers as the source."""
    import numpy as np

    (saved,) = (work / "backup" / "indexes").glob("*.bm25.npz")
    with np.load(saved) as arrays:
        data = {name: arrays[name] for name in arrays.files}
    data["indices"] = data["indices"] + 1_000_000
    with saved.open("wb") as out:
        np.savez(out, **data)
    reseal(work / "backup", f"indexes/{saved.name}")
    assert main(["restore", str(work / "backup"), "--data-dir", str(work / "new")]) == 0
    restored = (work / "new" / "indexes" / saved.name).read_bytes()
    assert restored == (work / "data" / "indexes" / saved.name).read_bytes()
    original, copy = library(work / "data"), library(work / "new")
    try:
        for question in ("When will the pier open?", "Which road did the storm close?"):
            expected = original.collection().ask(question).to_json()
            assert copy.collection().ask(question).to_json() == expected
    finally:
        original.close()
        copy.close()
