"""Hostile backups for the restore tests: a manifest rewritten, a file resealed with its new
checksum (as a hostile backup's author would), and the check that a refusal touched nothing."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from fakes import HashingTestEmbedder

from index import Library
from index.cli import main

ONE_SENTENCE = re.compile(r"error: [^\n\x1b]+[.)]\n?")
WORDS = (  # three articles, each its own story (a near-duplicate would be taken once)
    "The harbor master said the new pier would open in spring after the council approved the "
    "repairs, and the fishing fleet would return to the inner basin once the dredging ended.",
    "A storm closed the coastal road for two days last week; crews cleared fallen trees and "
    "the bus company restored its morning service to the villages north of the river.",
    "The library's reading room reopens on Monday with longer hours, a children's corner and "
    "a small exhibition of maps donated by a retired surveyor who lived above the bakery.",
)


def library(data_dir: Path) -> Library:
    return Library(data_dir, embedder=HashingTestEmbedder())  # type: ignore[arg-type]


def manifest_of(folder: Path) -> dict[str, Any]:
    return dict(json.loads((folder / "manifest.json").read_text()))


def write_manifest(folder: Path, manifest: Any) -> None:
    (folder / "manifest.json").write_text(json.dumps(manifest))


def reseal(folder: Path, name: str) -> None:
    """Give the manifest the size and checksum of the file as it is now (a hostile backup's
    author would)."""
    manifest = manifest_of(folder)
    data = (folder / name).read_bytes()
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    write_manifest(folder, manifest)


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `folder` but the backup's own: its bytes and modification time."""
    return {
        str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def refused(work: Path, capsys: pytest.CaptureFixture[str], *, within: float = 10.0) -> str:
    """Restore the backup into `work/new`: refused in one sentence, quickly, with nothing
    created, changed or left anywhere outside the backup; the message is returned."""
    before = {k: v for k, v in snapshot(work).items() if not k.startswith("backup/")}
    names = sorted(p.name for p in work.iterdir())
    started = time.monotonic()
    code = main(["restore", str(work / "backup"), "--data-dir", str(work / "new")])
    took = time.monotonic() - started
    out, err = capsys.readouterr()
    assert code == 1 and out == "", err
    assert ONE_SENTENCE.fullmatch(err), err
    assert "Traceback" not in err and took < within
    assert not (work / "new").exists()
    assert sorted(p.name for p in work.iterdir()) == names, "a file was left behind"
    after = {k: v for k, v in snapshot(work).items() if not k.startswith("backup/")}
    assert after == before, "a file outside the new folder was written"
    assert not list(work.rglob("*-wal")) and not list(work.rglob("*-shm"))
    return err
