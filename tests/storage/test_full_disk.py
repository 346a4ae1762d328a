"""A full disk, on a real small filesystem: adds fill a 32 MB tmpfs until the disk is full.

Each add is stored whole or refused with one sentence that says the disk is full; the store holds
exactly the articles reported added, SQLite's integrity check says "ok", what was stored before
is unchanged, `stats` and `ask` keep answering while the disk is full (a read never needs to
write), also in a new process when the disk filled while none had the database open (no room
for SQLite's shared-memory file), and once there is room again an add and a question work, with
no `rebuild`.

The filesystem is a tmpfs mounted in a mount namespace of its own (`unshare`), so nothing is left
mounted whatever happens to the test: as root directly, otherwise in a user namespace where an
ordinary user may mount. Where neither is allowed, the same drill runs with RLIMIT_FSIZE on
every process instead (a write past the limit fails as on a full disk), and says so. The drill
is this file run as a script inside the namespace; it prints what it saw as JSON, and the test
below judges it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve()
FAKE_CLI = [sys.executable, str(HERE.parents[1] / "fake_cli.py")]
SIZE_MB = 32
BALLAST_MB = 16  # written first and deleted at the end: "room again"
PARAGRAPHS = 800  # an article of about 2.5 MB stored (text, vectors, its share of the indexes)
ONE_SENTENCE = re.compile(r"[^\n]+[.)]")


# the drill, run inside the namespace


def write_article(folder: Path, number: int) -> tuple[Path, str, str]:
    """A distinct article of PARAGRAPHS short paragraphs; (path, title, one of its sentences)."""
    rng = random.Random(number)
    syllables = ["ka", "to", "ri", "sen", "mo", "lu", "pa", "ven", "dor", "is", "ul", "nat"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))) for _ in range(3000)]
    paragraphs = [
        " ".join(rng.choice(words) for _ in range(20)).capitalize() + "." for _ in range(PARAGRAPHS)
    ]
    title = f"Report {number}"
    path = folder / f"report-{number:02d}.txt"
    path.write_text(title + "\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path, title, paragraphs[PARAGRAPHS // 2]


def cli(data_dir: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")}
    env.update(ARTICLEBOT_DATA_DIR=str(data_dir), HF_HUB_OFFLINE="1")
    done = subprocess.run([*FAKE_CLI, *args], env=env, capture_output=True, text=True, timeout=300)
    return {"code": done.returncode, "out": done.stdout, "err": done.stderr}


def integrity(db: Path) -> str:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def fill(path: Path) -> None:
    """Write `path` until the disk is full, to the last block."""
    with path.open("wb", buffering=0) as f:
        for chunk in (1 << 20, 4096):
            try:
                while True:
                    f.write(b"\0" * chunk)
            except OSError:
                pass


def free_bytes(folder: Path) -> int:
    info = os.statvfs(folder)
    return info.f_bavail * info.f_frsize


def drill(mode: str, mount_point: Path, articles: Path) -> dict[str, Any]:
    if mode == "rlimit":
        # Until there is "room again", every `articlebot` process may write files of at most
        # half of SIZE_MB: SQLite's database file, then its WAL, meet the limit as they would
        # meet a full disk (a write that reaches it is cut short, one past it fails).
        os.environ["FAKE_CLI_FILE_LIMIT_MB"] = str(SIZE_MB // 2)
    else:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m", "tmpfs", str(mount_point)],
            check=True,
        )
    data_dir = mount_point / "data"
    ballast = mount_point / "ballast"
    ballast.write_bytes(b"\0" * (BALLAST_MB << 20))
    report: dict[str, Any] = {"mode": mode, "adds": []}
    made = [write_article(articles, n) for n in range(40)]
    added: list[str] = []
    for path, title, _ in made[:-1]:
        result = cli(data_dir, "add", str(path), "--json")
        report["adds"].append(result)
        lines = [json.loads(line) for line in result["out"].splitlines()]
        if lines and lines[0].get("added"):
            added.append(title)
        if sum(1 for a in report["adds"][-3:] if a["code"] != 0) == 3 and len(report["adds"]) > 3:
            break  # three refusals in a row: the disk is full and stays full
    report["added"] = added
    report["free_when_full"] = free_bytes(mount_point)
    report["stats_when_full"] = cli(data_dir, "stats", "--json")
    report["list_when_full"] = cli(data_dir, "list", "--json")
    probes = {title: probe for _, title, probe in made}
    report["asked_when_full"] = [
        {"expected": title, **cli(data_dir, "ask", probes[title], "--json")}
        for title in (added[0], added[-1])
    ]
    report["integrity_when_full"] = integrity(data_dir / "articlebot.db")

    ballast.unlink()
    if mode != "rlimit":
        # Filled by something else (a log, say) while no process had the database open: with
        # the WAL checkpointed and SQLite's shared-memory file gone, a new process must open the
        # database with no room to make that file again.
        with contextlib.closing(sqlite3.connect(data_dir / "articlebot.db")) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # with room: -wal and -shm go
        filler = mount_point / "filler"
        fill(filler)
        report["shm_left_when_filled"] = (data_dir / "articlebot.db-shm").exists()
        report["asked_when_filled"] = {
            "expected": added[0],
            **cli(data_dir, "ask", probes[added[0]], "--json"),
        }
        filler.unlink()
    os.environ.pop("FAKE_CLI_FILE_LIMIT_MB", None)
    path, title, probe = made[-1]
    report["add_with_room"] = cli(data_dir, "add", str(path), "--json")
    report["ask_with_room"] = {"expected": title, **cli(data_dir, "ask", probe, "--json")}
    report["stats_with_room"] = cli(data_dir, "stats", "--json")
    report["integrity_with_room"] = integrity(data_dir / "articlebot.db")
    report["first_article"] = cli(data_dir, "show", "1", "--json")
    report["first_article_expected"] = made[0][0].read_text(encoding="utf-8")
    if mode != "rlimit":
        stored = (added[0], probes[added[0]])
        report["long_running"] = long_running(data_dir, mount_point, made[-2], stored)
    return report


def long_running(
    data_dir: Path, mount_point: Path, new: tuple[Path, str, str], stored: tuple[str, str]
) -> dict[str, Any]:
    """One process that stays open (as the bot does) while the disk fills and frees again."""
    sys.path.insert(0, str(HERE.parents[1]))
    from fakes import HashingTestEmbedder

    from index import Library
    from index.errors import DiskFull
    from index.ingest.readers import read_path

    library = Library(data_dir, embedder=HashingTestEmbedder())  # type: ignore[arg-type]
    collection = library.collection()
    filler = mount_point / "filler"
    fill(filler)
    seen: dict[str, Any] = {}
    try:
        collection.add(read_path(new[0]))
        seen["refused"] = None
    except DiskFull as exc:
        seen["refused"] = str(exc)
    seen["asked_when_full"] = [c.title for c in collection.ask(stored[1]).citations]
    filler.unlink()
    seen["added_with_room"] = collection.add(read_path(new[0])).added
    seen["asked_with_room"] = [c.title for c in collection.ask(new[2]).citations]
    seen["titles"] = [new[1], stored[0]]
    library.close()
    return seen


# the test


def _namespaces() -> list[tuple[str, list[str]]]:
    """The ways to mount a tmpfs of our own here, best first."""
    unshare = shutil.which("unshare")
    if unshare is None or shutil.which("mount") is None:
        return []
    private = ["--mount", "--propagation", "private"]
    ways = [("tmpfs in a user namespace", [unshare, "--user", "--map-root-user", *private])]
    if os.geteuid() == 0:
        ways.insert(0, ("tmpfs", [unshare, *private]))
    return ways


def _can_mount(prefix: list[str], folder: Path) -> bool:
    probe = subprocess.run(
        [*prefix, "mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


def _small_disk(mount_point: Path) -> tuple[str, list[str]]:
    """The best way to a small filesystem here, and the command prefix that enters it."""
    forced = (
        os.environ.get("FULL_DISK_DRILL") or None
    )  # a way's name, to try it where a better one works
    for name, way in _namespaces():
        if forced in (None, name) and _can_mount(way, mount_point):
            return name, way
    return "rlimit", []


def _one_sentence_about_a_full_disk(message: str, mode: str) -> bool:
    if not ONE_SENTENCE.fullmatch(message.strip()):
        return False
    if mode == "rlimit":  # SQLite tells a write past the limit from a full disk: "free space"
        return "full" in message or "free space" in message
    return "disk" in message and "full" in message


def _answered(result: dict[str, Any]) -> bool:
    if result["code"] != 0 or "Traceback" in result["err"]:
        return False
    answer = json.loads(result["out"])
    return result["expected"] in {c["title"] for c in answer["citations"]}


@pytest.mark.slow
def test_a_full_disk_refuses_adds_in_one_sentence_and_keeps_answering(tmp_path: Path) -> None:
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    articles = tmp_path / "articles"
    articles.mkdir()
    mode, prefix = _small_disk(mount_point)
    done = subprocess.run(
        [*prefix, sys.executable, str(HERE), mode, str(mount_point), str(articles)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    print(f"full disk drill: {mode}, {len(report['added'])} articles stored before it was full")

    adds = report["adds"]
    assert all("Traceback" not in a["err"] for a in adds), [a["err"] for a in adds]
    refused = [json.loads(a["out"])["error"] for a in adds if a["code"] != 0]
    assert len(refused) >= 3, "the disk should have filled"
    assert all(_one_sentence_about_a_full_disk(m, mode) for m in refused), refused
    assert len(report["added"]) + len(refused) == len(adds)
    if mode != "rlimit":
        assert report["free_when_full"] < 3 << 20  # the disk really was full

    # The store holds exactly the articles reported added, each whole, all of them indexed.
    listed = json.loads(report["list_when_full"]["out"])
    assert sorted(a["title"] for a in listed) == sorted(report["added"])
    assert report["integrity_when_full"] == "ok"
    stats = json.loads(report["stats_when_full"]["out"])
    assert stats["articles"] == len(report["added"])
    assert stats["passages"] == stats["indexed"] == PARAGRAPHS * len(report["added"])
    assert "Traceback" not in report["stats_when_full"]["err"]
    assert all(_answered(a) for a in report["asked_when_full"]), report["asked_when_full"]

    if mode != "rlimit":
        assert not report["shm_left_when_filled"]
        assert _answered(report["asked_when_filled"]), report["asked_when_filled"]
        assert "for this process alone" in report["asked_when_filled"]["err"]

    # With room again: an add and a question work, without a rebuild.
    assert report["add_with_room"]["code"] == 0, report["add_with_room"]
    assert json.loads(report["add_with_room"]["out"])["added"]
    assert _answered(report["ask_with_room"]), report["ask_with_room"]
    stats = json.loads(report["stats_with_room"]["out"])
    assert stats["articles"] == len(report["added"]) + 1
    assert stats["passages"] == stats["indexed"]
    assert report["integrity_with_room"] == "ok"
    if mode != "rlimit":  # a process that stays open gets its adds back, no restart needed
        seen = report["long_running"]
        assert _one_sentence_about_a_full_disk(seen["refused"] or "", mode), seen
        assert seen["titles"][1] in seen["asked_when_full"], seen
        assert seen["added_with_room"] and seen["titles"][0] in seen["asked_with_room"], seen
    # What was stored before the disk filled is unchanged.
    first = json.loads(report["first_article"]["out"])
    expected = report["first_article_expected"].split("\n\n")[1:]
    assert [p["text"] for p in first["passages"]] == [p.strip() for p in expected]


# Run as `sh -c` inside the namespace: mount a 1 MB tmpfs, back up onto it, list what is left.
BACKUP_ONTO = (
    'mount -t tmpfs -o size=1m tmpfs "$1" && "$2" -m index backup "$1/b" --data-dir "$3"; '
    'code=$?; ls -A "$1"; exit $code'
)
BACKUP_UNDER_RLIMIT = (
    "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20)); "
    "from index.cli import main; sys.exit(main(sys.argv[1:]))"
)


@pytest.mark.slow
def test_a_backup_onto_a_full_disk_leaves_nothing_half_written(tmp_path: Path) -> None:
    articles = tmp_path / "articles"
    articles.mkdir()
    path, _, _ = write_article(articles, 0)
    source = tmp_path / "data"
    assert cli(source, "add", str(path), "--json")["code"] == 0  # about 2.5 MB stored
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mode, prefix = _small_disk(mount_point)
    if mode == "rlimit":
        command = [sys.executable, "-c", BACKUP_UNDER_RLIMIT, "backup", str(mount_point / "b")]
        command += ["--data-dir", str(source)]
    else:
        command = [*prefix, "sh", "-c", BACKUP_ONTO, "sh", str(mount_point), sys.executable]
        command.append(str(source))
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    print(f"backup onto a full disk: {mode}")
    assert done.returncode == 1, done.stderr
    message = done.stderr.strip().removeprefix("error: ")
    assert _one_sentence_about_a_full_disk(message, mode) and "Traceback" not in message, message
    left = done.stdout.split() if mode != "rlimit" else os.listdir(mount_point)
    assert left == [], "a backup cut short leaves nothing that looks like one"


if __name__ == "__main__":
    print(json.dumps(drill(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]))))
