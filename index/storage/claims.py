"""One process per range of Discord shards: a claim taken when the bot starts, held until it stops.

Two processes serving the same shard would both answer every question. So the bot claims what
it serves before it logs in, and a second process whose range meets a held one stops with a
sentence that names the first (its host and process id). Shards are numbered parts here, not
a Discord idea: `None` is all of them (a process that runs every shard Discord recommends).

The claim is a set of locks that the operating system (or PostgreSQL) releases when their
holder dies, so a restart after a crash or a `kill -9` is never blocked:
- all shards: the whole lock, exclusively;
- shards 0-3: the whole lock shared (no process may take all shards meanwhile) and each
  shard's own lock exclusively (no other range may hold shard 2).

This module holds the data folder's kind (`flock` on files under `locks/` in the folder, each
file naming its holder); `index/storage/postgres/claims.py` holds PostgreSQL's (advisory locks,
for processes on several machines that share one database).
"""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator, Sequence
from pathlib import Path

from index.errors import ConfigurationError

try:
    import fcntl
except ImportError:  # Windows: no flock, and one process a data folder there anyway
    fcntl = None  # type: ignore[assignment]

__all__ = ["AlreadyServed", "describe", "holder", "served_by_folder"]


class AlreadyServed(ConfigurationError):
    """Another live process serves some of the shards this one was asked to serve: two
    processes' settings name the same shards, which restarting either does not change."""


def holder(shards: Sequence[int] | None) -> str:
    """This process, serving `shards`, as the sentence of another names it."""
    return f"host {socket.gethostname()}, pid {os.getpid()}, serving {describe(shards)}"


def describe(shards: Sequence[int] | None) -> str:
    """`all shards`, `shard 2`, or `shards 0-3` (or `shards 0, 2, 5`)."""
    if shards is None:
        return "all shards"
    ids = sorted(set(shards))
    if len(ids) == 1:
        return f"shard {ids[0]}"
    if ids == list(range(ids[0], ids[-1] + 1)):
        return f"shards {ids[0]}-{ids[-1]}"
    return "shards " + ", ".join(map(str, ids))


def refusal(shards: Sequence[int] | None, where: str, others: Sequence[str]) -> AlreadyServed:
    first = f"Another articlebot process ({others[0]})" if others else "Another articlebot process"
    return AlreadyServed(
        f"{first} already answers for {where}, and this one was asked to serve "
        f"{describe(shards)}; stop that one first, or give each process shards of its own with "
        "ARTICLEBOT_SHARD_IDS."
    )


@contextlib.contextmanager
def served_by_folder(folder: Path, shards: Sequence[int] | None) -> Iterator[None]:
    """Hold the data folder's claim on `shards` (None: all of them) for the block."""
    locks = folder / "locks"
    locks.mkdir(parents=True, exist_ok=True, mode=0o700)
    me = holder(shards).encode()
    with contextlib.ExitStack() as held:
        whole = held.enter_context(_open(locks / "bot.lock"))
        if shards is None:
            if not _try(whole, exclusive=True):  # by a process of all shards, or of some
                others = [locks / "bot.lock", *sorted(locks.glob("shard-*.lock"))]
                raise refusal(None, "this data folder", _holders(others))
            _name(whole, me)
        else:
            if not _try(whole, exclusive=False):  # held exclusively: by a process of all shards
                raise refusal(shards, "this data folder", _holders([locks / "bot.lock"]))
            for shard in sorted(set(shards)):
                fd = held.enter_context(_open(_shard_path(locks, shard)))
                if not _try(fd, exclusive=True):
                    raise refusal(shards, "this data folder", _holders([_shard_path(locks, shard)]))
                _name(fd, me)
        yield


@contextlib.contextmanager
def _open(path: Path) -> Iterator[int]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def _try(fd: int, *, exclusive: bool) -> bool:
    if fcntl is None:
        return True
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _name(fd: int, me: bytes) -> None:
    """Write who holds the lock into its file, for the sentence of the next to try it."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, me, 0)


def _shard_path(locks: Path, shard: int) -> Path:
    return locks / f"shard-{shard}.lock"


def _holders(paths: Sequence[Path]) -> list[str]:
    """Who holds the locks that refused us: the named holder of each file held exclusively (a
    file no one holds keeps the text of its last holder, who is gone; the whole lock, held
    shared by the processes of some shards, keeps the text of a process of all shards)."""
    found = []
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if fcntl is not None and _try(fd, exclusive=False):
                continue  # no one holds it exclusively: its text is a former holder's
            text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
        finally:
            os.close(fd)
        if text and text not in found:
            found.append(text)
    return found
