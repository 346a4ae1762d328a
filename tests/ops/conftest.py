"""The hostile backups' shared start: a pristine backup made once, and a copy of it per test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hostile_backups import WORDS, library

from index.ops.backup import backup
from index.records import Document
from index.storage.collection_settings import CollectionSettings


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A backup of a data folder of 3 articles and a server's setting, taken once; each test
    works on a copy."""
    work = tmp_path_factory.mktemp("pristine")
    lib = library(work / "data")
    for n, text in enumerate(WORDS):
        lib.collection().add(Document(title=f"Harbor news {n}", paragraphs=[text]))
    lib.collection().ask("When will the pier open?")
    lib.close()
    server_settings = CollectionSettings.in_folder(work / "data")
    server_settings.set("default", "threads", False)
    server_settings.close()
    backup(work / "data", work / "backup")
    return work


@pytest.fixture
def work(tmp_path: Path, pristine: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tmp_path with `backup/` (a copy of the pristine backup), `data/` (its source) and
    `outside.txt`, a file no restore may touch."""
    monkeypatch.chdir(tmp_path)
    for name in ("ARTICLEBOT_DATABASE_URL", "ARTICLEBOT_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    shutil.copytree(pristine / "backup", tmp_path / "backup", symlinks=True)
    shutil.copytree(pristine / "data", tmp_path / "data", symlinks=True)
    (tmp_path / "outside.txt").write_text("keep me\n")
    return tmp_path
