"""What the last backups did, kept in the data folder for `/metrics`: when the newest good one
was written and where, and whether a run failed since (with its one sentence).

`articlebot backup` writes it at the end of every run, good or failed (a stopped run is a
failed one); the bot reads it at each scrape, so a backup that failed, hung past its timeout or
never ran shows as the age of the last good one growing. Written whole (a temporary file
renamed over it), read leniently: a missing or damaged record is "no backup known".
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from index.storage.data_folder import BACKUP_RECORD

__all__ = ["BackupRecord", "read_record", "write_record"]


@dataclass(frozen=True)
class BackupRecord:
    last_good_at: float | None  # seconds since the epoch
    last_good_folder: str | None
    failed_at: float | None  # the last failed run, if after the last good one
    failure: str | None


def read_record(data_dir: Path) -> BackupRecord:
    try:
        data = json.loads((Path(data_dir) / BACKUP_RECORD).read_text(encoding="utf-8"))
        good, failed = data.get("good") or {}, data.get("failed") or {}
        return BackupRecord(
            _seconds(good.get("at")),
            str(good["folder"]) if good.get("folder") else None,
            _seconds(failed.get("at")),
            str(failed["error"])[:500] if failed.get("error") else None,
        )
    except (OSError, ValueError, AttributeError, TypeError):
        return BackupRecord(None, None, None, None)


def write_record(data_dir: Path, *, folder: Path | None = None, error: str | None = None) -> None:
    """Record a good run (`folder`, the backup written) or a failed one (`error`); raises
    OSError where the data folder cannot be written."""
    before = read_record(data_dir)
    now = time.time()
    good = (
        {"at": now, "folder": str(folder)}
        if folder is not None
        else (
            {"at": before.last_good_at, "folder": before.last_good_folder}
            if before.last_good_at
            else None
        )
    )
    failed = {"at": now, "error": error} if error is not None else None
    data_dir = Path(data_dir)
    fd, temporary = tempfile.mkstemp(prefix=f".{BACKUP_RECORD}.", dir=data_dir)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"good": good, "failed": failed}, out)
        os.replace(temporary, data_dir / BACKUP_RECORD)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _seconds(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and value > 0 else None
