"""What the restore tests read through the command line: its exit code and output, and the
articles `articlebot list --json` shows in a data folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from index.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def listed(capsys: pytest.CaptureFixture[str], data_dir: Path, collection: str) -> list[Any]:
    """`articlebot list --json` of one collection: the articles a user sees."""
    code, out, err = run(
        capsys, "list", f"--collection={collection}", "--data-dir", str(data_dir), "--json"
    )
    assert code == 0, err
    return [
        {k: a[k] for k in ("id", "collection", "title", "passages", "content_hash")}
        for a in json.loads(out)
    ]
