"""`articlebot backup` and `restore` on real data folders: backups taken while another process
adds articles restore whole (integrity "ok", every article with all its passages, indexes in
step with the store), a restored copy answers exactly as its source, and a folder that is not
empty (or that a running process holds) is refused in one sentence.

The articles are embedded by the test embedder (tests/fakes.py) in every process: what is
checked is what storage and the copy do, not answer quality.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_cli import FAKE_CLI
from fakes import HashingTestEmbedder
from fault_tools import SQUAD_EXCERPT, cli_env

from index import Article, Library
from index.cli import main
from index.ingest.readers import read_path
from index.storage.collection_settings import CollectionSettings
from index.storage.conversations import Conversations

ONE_SENTENCE = re.compile(r"error: [^\n]+[.)]\n?")


def write_articles(folder: Path) -> list[tuple[Path, str]]:
    """One article per SQuAD excerpt paragraph (90), with a question each: the article's own
    question for its first paragraph, else the paragraph's first sentence."""
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for n, entry in enumerate(json.loads(SQUAD_EXCERPT.read_text(encoding="utf-8"))["articles"]):
        for k, paragraph in enumerate(entry["paragraphs"]):
            path = folder / f"{n:02d}-{k}.txt"
            title = f"{entry['title'].replace('_', ' ')}, part {k + 1}"
            path.write_text(f"{title}\n\n{paragraph.strip()}\n", encoding="utf-8")
            question = entry["question"] if k == 0 else re.split(r"(?<=[.!?])\s", paragraph)[0]
            made.append((path, question))
    return made


def library(data_dir: Path) -> Library:
    return Library(data_dir, embedder=HashingTestEmbedder())  # type: ignore[arg-type]


def count(data_dir: Path, table: str = "articles") -> int:
    db = sqlite3.connect(data_dir / "articlebot.db")
    try:
        return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        db.close()


def passages(data_dir: Path) -> int:
    return count(data_dir, "passages")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(autouse=True)
def _no_settings_from_outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands run in this process: no `.env` of the checkout, no database URL."""
    monkeypatch.chdir(tmp_path)
    for name in ("ARTICLEBOT_DATABASE_URL", "ARTICLEBOT_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def articles(tmp_path: Path) -> list[tuple[Path, str]]:
    return write_articles(tmp_path / "articles")


@pytest.fixture
def source(tmp_path: Path, articles: list[tuple[Path, str]]) -> Iterator[Path]:
    """A data folder with 6 articles, a conversation turn, a vote and a server's setting."""
    data_dir = tmp_path / "source"
    lib = library(data_dir)
    collection = lib.collection()
    for path, _ in articles[:6]:
        collection.add(read_path(path))
    answer = collection.ask(articles[0][1])
    conversations = Conversations.in_folder(data_dir)
    conversations.record("default", 1, answer)
    conversations.vote("default", 1, 42, helpful=True)
    conversations.close()
    settings = CollectionSettings.in_folder(data_dir)
    settings.set("default", "threads", False)
    settings.close()
    lib.close()
    yield data_dir


@pytest.fixture
def backup(source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A backup of `source`, taken by the command."""
    assert run(capsys, "backup", str(tmp_path / "b"), "--data-dir", str(source))[0] == 0
    return tmp_path / "b"


def test_backup_and_restore_of_a_quiet_folder(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "backup", str(tmp_path / "b"), "--data-dir", str(source), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert set(report) == {"backup", "articles", "passages", "bytes"}
    assert report["articles"] == 6 and report["passages"] == passages(source)
    backup = tmp_path / "b"
    assert report["bytes"] == sum(p.stat().st_size for p in backup.rglob("*") if p.is_file())
    manifest = json.loads((backup / "manifest.json").read_text())
    assert manifest["collections"] == {"default": {"articles": 6, "passages": report["passages"]}}
    assert manifest["tables"]["conversations.db"] == {"turns": 1, "votes": 1}
    assert manifest["tables"]["settings.db"] == {"settings": 1}
    assert {"articlebot.db", "conversations.db", "settings.db"} <= set(manifest["files"])
    assert not list(backup.glob("*-wal")), "each copy is one self-contained file"

    target = tmp_path / "restored"
    code, out, err = run(capsys, "restore", str(backup), "--data-dir", str(target), "--json")
    assert code == 0, err
    restored = json.loads(out)
    assert (restored["articles"], restored["passages"]) == (6, passages(source))
    assert restored["bytes"] == sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    code, out, err = run(capsys, "list", "--data-dir", str(target), "--json")
    assert code == 0, err
    assert json.loads(out) == json.loads(
        run(capsys, "list", "--data-dir", str(source), "--json")[1]
    )
    code, out, err = run(capsys, "stats", "--data-dir", str(target), "--json")
    stats = json.loads(out)
    assert code == 0 and stats["indexed"] == stats["passages"] == passages(source), stats
    conversations = Conversations.in_folder(target)
    assert conversations.counts("default").helpful == 1
    conversations.close()
    settings = CollectionSettings.in_folder(target)
    assert settings.get("default") == {"threads": False}
    settings.close()


def test_restore_refuses_a_folder_that_is_not_empty_in_one_sentence(
    source: Path, backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("keep me")
    code, out, err = run(capsys, "restore", str(backup), "--data-dir", str(taken))
    assert code == 1 and out == ""
    assert ONE_SENTENCE.fullmatch(err), err
    assert "not empty" in err and "Traceback" not in err
    assert (taken / "notes.txt").read_text() == "keep me" and len(list(taken.iterdir())) == 1

    # Into a backup's own folder, or a backup over one: refused alike.
    code, _, err = run(capsys, "backup", str(backup), "--data-dir", str(source))
    assert code == 1 and ONE_SENTENCE.fullmatch(err), err
    code, _, err = run(
        capsys, "restore", str(tmp_path / "nothing"), "--data-dir", str(tmp_path / "x")
    )
    assert code == 1 and ONE_SENTENCE.fullmatch(err) and "not an articlebot backup" in err
    assert not (tmp_path / "x").exists()


def test_restore_refuses_a_damaged_backup_in_one_sentence(
    source: Path, backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = backup / "articlebot.db"
    data = bytearray(store.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one bit flipped in a page in the middle
    store.write_bytes(bytes(data))
    code, _, err = run(capsys, "restore", str(backup), "--data-dir", str(tmp_path / "r1"))
    assert code == 1 and ONE_SENTENCE.fullmatch(err), err
    assert "articlebot.db" in err and "checksum" in err
    assert not (tmp_path / "r1").exists() and not list(tmp_path.glob(".r1*"))

    (backup / "manifest.json").write_text('{"files": {"articlebot.db": 7}}')
    code, _, err = run(capsys, "restore", str(backup), "--data-dir", str(tmp_path / "r2"))
    assert code == 1 and ONE_SENTENCE.fullmatch(err) and "damaged" in err, err


@pytest.mark.slow
def test_restore_refuses_the_folder_of_a_running_process(
    source: Path, backup: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
            "db.execute('SELECT COUNT(*) FROM articles').fetchone(); print('open', flush=True); "
            "sys.stdin.read()",
            str(source / "articlebot.db"),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        code, _, err = run(capsys, "restore", str(backup), "--data-dir", str(source))
    finally:
        holder.communicate("", timeout=30)
    assert code == 1 and ONE_SENTENCE.fullmatch(err), err
    assert "running articlebot" in err and "stop it" in err
    assert count(source) == 6


@pytest.mark.slow
def test_backups_taken_during_adds_restore_whole_and_answer_as_the_source(
    source: Path,
    tmp_path: Path,
    articles: list[tuple[Path, str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Three backups, each taken while another process adds 12 articles: each restores into an
    empty folder with between the articles before and after the adds, every database "ok",
    every article whole and every passage indexed; then a copy taken afterwards answers 30
    questions exactly as the source does."""
    whole: dict[str, int] = {}  # title -> passages, as the source stores them in the end
    for round_ in range(3):
        before = count(source)
        files = [str(p) for p, _ in articles[6 + 12 * round_ : 18 + 12 * round_]]
        adder = subprocess.Popen(
            [*FAKE_CLI, "add", *files, "--json"],
            env=cli_env(source),
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert adder.stdout is not None
        first = adder.stdout.readline()  # it is adding: one article stored, eleven to come
        assert json.loads(first)["added"], first
        backup = tmp_path / f"backup-{round_}"
        code, out, err = run(capsys, "backup", str(backup), "--data-dir", str(source), "--json")
        rest, errors = adder.communicate(timeout=300)
        assert code == 0, err
        assert adder.returncode == 0, errors
        assert len([first, *rest.splitlines()]) == 12
        after = count(source)
        assert after == before + 12

        target = tmp_path / f"restored-{round_}"
        code, out, err = run(capsys, "restore", str(backup), "--data-dir", str(target), "--json")
        assert code == 0, err
        restored = json.loads(out)["articles"]
        assert before <= restored <= after
        assert count(target) == restored
        for db in sorted(target.glob("*.db")):
            with contextlib.closing(sqlite3.connect(db)) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok", db
        copy = library(target)
        stats = copy.collection().stats()
        assert stats.indexed == stats.passages and stats.articles == restored
        whole |= {a.title: a.passages for a in library_articles(source)}
        for article in copy.collection().articles():
            assert article.passages == whole[article.title], article.title
        copy.close()

    final = tmp_path / "final"
    assert run(capsys, "backup", str(final), "--data-dir", str(source))[0] == 0
    assert run(capsys, "restore", str(final), "--data-dir", str(tmp_path / "copy"))[0] == 0
    questions = [q for _, q in articles[:42]][:30]
    original, copy = library(source), library(tmp_path / "copy")
    try:
        for question in questions:
            expected = original.collection().ask(question).to_json()
            assert copy.collection().ask(question).to_json() == expected, question
    finally:
        original.close()
        copy.close()


def library_articles(data_dir: Path) -> list[Article]:
    lib = library(data_dir)
    try:
        return list(lib.collection().articles())
    finally:
        lib.close()


# PostgreSQL: pg_dump where it is installed, else one sentence on how


def test_backup_of_postgresql_without_pg_dump_says_how(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", "postgresql://bot:s3cret@127.0.0.1:9/none")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    code, out, err = run(capsys, "backup", str(tmp_path / "b"))
    assert code == 1 and out == "" and ONE_SENTENCE.fullmatch(err), err
    assert "pg_dump" in err and "s3cret" not in err
    assert not (tmp_path / "b").exists()


def test_backup_of_postgresql_runs_pg_dump(
    database_url: str,
    tmp_path: Path,
    articles: list[tuple[Path, str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import pgserver  # the test server's own client tools

    tools = Path(pgserver.__file__).parent / "pginstall" / "bin"
    lib = Library(tmp_path / "d", embedder=HashingTestEmbedder(), database_url=database_url)  # type: ignore[arg-type]
    for path, _ in articles[:3]:
        lib.collection().add(read_path(path))
    lib.close()
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", database_url)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    code, out, err = run(capsys, "backup", str(tmp_path / "b"), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["articles"] == 3 and report["passages"] == 3
    dump = tmp_path / "b" / "articlebot.pgdump"
    listing = subprocess.run(
        [str(tools / "pg_restore"), "--list", str(dump)], capture_output=True, text=True
    )
    assert (
        listing.returncode == 0 and "TABLE DATA" in listing.stdout and "passages" in listing.stdout
    )
    # Into a data folder it cannot go: restore says how to restore it instead.
    code, _, err = run(capsys, "restore", str(tmp_path / "b"), "--data-dir", str(tmp_path / "x"))
    assert code == 1 and ONE_SENTENCE.fullmatch(err) and "pg_restore" in err, err


def test_a_pg_dump_that_cannot_finish_is_stopped_and_the_backup_fails_in_one_sentence(
    database_url: str,
    tmp_path: Path,
    articles: list[tuple[Path, str]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The real pg_dump, waiting on a table another transaction holds (what a long migration
    or a forgotten session does): without a bound it waits for ever, and a daily timer's
    backups stop with nothing said. With one it is stopped, the command fails with one
    sentence and exit status 1, and nothing is left behind."""
    import pgserver
    import psycopg

    tools = Path(pgserver.__file__).parent / "pginstall" / "bin"
    lib = Library(tmp_path / "d", embedder=HashingTestEmbedder(), database_url=database_url)  # type: ignore[arg-type]
    lib.collection().add(read_path(articles[0][0]))
    lib.close()
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", database_url)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    with psycopg.connect(database_url) as holder:  # its transaction lasts until the block ends
        holder.execute("LOCK TABLE feed_entries IN ACCESS EXCLUSIVE MODE")
        started = time.monotonic()
        code, out, err = run(capsys, "backup", str(tmp_path / "b"), "--timeout", "3")
        seconds = time.monotonic() - started
    assert code == 1 and out == "" and ONE_SENTENCE.fullmatch(err), err
    assert "pg_dump did not finish within 3 s" in err and "--timeout" in err
    assert seconds < 30, seconds
    assert not (tmp_path / "b").exists() and not list(tmp_path.glob(".b.*"))
