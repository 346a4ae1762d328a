"""One process per range of Discord shards: a claim taken when the bot starts, held until it stops.

Two processes serving the same shard would both answer every question. So the bot claims what
it serves before it logs in, and a second process whose range meets a held one stops with a
sentence that names the first (its host and process id). Shards are numbered parts here, not
a Discord idea: `None` is all of them (a process that runs every shard Discord recommends).

The claim is a set of locks that the operating system (or PostgreSQL) releases when their
holder dies, so a restart after a crash or a `kill -9` is never blocked:
- all shards: the whole lock, exclusively;
- shards 0-3: the whole lock shared (no process may take all shards meanwhile) and each
  shard's own lock exclusively (no other range may hold shard 2);
- and, shared, a lock of the release and one of the shard count: shard 1 of 4 and shard 0 of 2
  hold different shard numbers but share servers, and two releases must not serve together
  (docs/operate.md, Upgrading), so a process refuses to start while another holds another
  release's lock or another count's. Checking for those and taking its own are two steps: a
  process takes every lock of its claim holding the claims' gate, an exclusive lock held only
  while it does, so that of two processes starting at once one sees the other's.

This module holds the data folder's kind (`flock` on files under `locks/` in the folder, each
file naming its holder); `index/storage/postgres/claims.py` holds PostgreSQL's (advisory locks,
for processes on several machines that share one database), which a database restart or a
dropped connection can take away while the process runs: there the claim is watched, taken
again, and `Claim.problem()` says while it is not held.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import socket
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from index.errors import ConfigurationError, StorageError
from index.version import version

try:
    import fcntl
except ImportError:  # Windows: no flock, and one process a data folder there anyway
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "AlreadyServed",
    "Claim",
    "ClaimConflict",
    "describe",
    "holder",
    "release",
    "served_by_folder",
]

# Seconds a process waits for the claims' gate, which another holds for milliseconds.
GATE_WAIT_S = 10.0


class AlreadyServed(ConfigurationError):
    """Another live process serves some of the shards this one was asked to serve: two
    processes' settings name the same shards, which restarting either does not change."""


class ClaimConflict(ConfigurationError):
    """Another live process serves the same store with another shard count or release."""


class Claim:
    """The claim a process holds while it serves `serving` (describe() says it). One of the
    data folder is held until its block ends; PostgreSQL's can be lost meanwhile."""

    def __init__(self, serving: str = "all shards") -> None:
        self.serving = serving

    def problem(self) -> str | None:
        """Why the claim is not held now (its caller must answer nothing meanwhile), or None
        while it is."""
        return None

    def taken_over(self) -> ConfigurationError | None:
        """Once another process took the shards while this one had lost its claim: the
        sentence this one stops with (it never gets them back)."""
        return None


def release() -> str:
    """The release a claim is keyed with."""
    return version()


def holder(count: int | None, shards: Sequence[int] | None) -> str:
    """This process, serving `shards` of `count`, as the sentence of another names it."""
    return f"host {socket.gethostname()}, pid {os.getpid()}, serving {describe(shards, count)}"


def describe(shards: Sequence[int] | None, count: int | None = None) -> str:
    """`all shards`, `shard 2 of 4`, `shards 0-3 of 8` (or `shards 0, 2, 5 of 8`)."""
    of = f" of {count}" if count is not None else ""
    if shards is None:
        return f"all {count} shards" if count is not None else "all shards"
    ids = sorted(set(shards))
    if len(ids) == 1:
        return f"shard {ids[0]}{of}"
    if ids == list(range(ids[0], ids[-1] + 1)):
        return f"shards {ids[0]}-{ids[-1]}{of}"
    return "shards " + ", ".join(map(str, ids)) + of


def _first(others: Sequence[str]) -> str:
    return f"Another articlebot process ({others[0]})" if others else "Another articlebot process"


def refusal(
    shards: Sequence[int] | None, where: str, others: Sequence[str], count: int | None = None
) -> AlreadyServed:
    return AlreadyServed(
        f"{_first(others)} already answers for {where}, and this one was asked to serve "
        f"{describe(shards, count)}; stop that one first, or give each process shards of its "
        "own with ARTICLEBOT_SHARD_IDS."
    )


def other_count(where: str, theirs: int, mine: int, others: Sequence[str]) -> ClaimConflict:
    return ClaimConflict(
        f"{_first(others)} serves {where} with ARTICLEBOT_SHARD_COUNT={theirs}, and this one "
        f"was asked for ARTICLEBOT_SHARD_COUNT={mine}, under which their servers overlap; give "
        "every process the same ARTICLEBOT_SHARD_COUNT, or stop that one first."
    )


def other_release(where: str, theirs: str | None, others: Sequence[str]) -> ClaimConflict:
    named = f"release {theirs}" if theirs else "another release"
    return ClaimConflict(
        f"{_first(others)} serves {where} with {named}, and this one is articlebot "
        f"{release()}, which must not serve beside it; stop every process of the other "
        "release first (docs/operate.md, Upgrading)."
    )


def after_loss(error: ConfigurationError, serving: str) -> ConfigurationError:
    """`error`, met when taking a lost claim again: the same kind, said as what happened."""
    text = str(error)
    return type(error)(
        f"While this process had lost its claim on {serving}, {text[:1].lower()}{text[1:]}"
    )


@contextlib.contextmanager
def served_by_folder(
    folder: Path, count: int | None, shards: Sequence[int] | None
) -> Iterator[Claim]:
    """Hold the data folder's claim on `shards` of `count` (None: all of them; a count of None:
    as many as Discord recommends) for the block."""
    locks = folder / "locks"
    locks.mkdir(parents=True, exist_ok=True, mode=0o700)
    with contextlib.ExitStack() as held:
        try:
            _take(held, locks, count, shards)
        except OSError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            raise ConfigurationError(
                f"Serving {describe(shards, count)} takes an open file for each shard, more "
                f"than this process may open{_file_limit()}; raise its limit (LimitNOFILE= in "
                "articlebot.service, ulimit -n in a shell) or give each process fewer shards "
                "with ARTICLEBOT_SHARD_IDS."
            ) from None
        yield Claim(describe(shards, count))


def _take(
    held: contextlib.ExitStack, locks: Path, count: int | None, shards: Sequence[int] | None
) -> None:
    """Take the claim's locks into `held`, holding the gate meanwhile."""
    where = "this data folder"
    with _open(locks / "claims.lock") as gate:
        _wait(gate, locks / "claims.lock")
        # Held shared before the shards and given up after them (closed in the reverse order):
        # a process that holds shards holds these.
        mine = _release_path(locks)
        for path in sorted(locks.glob("release-*.lock")):
            if path != mine and _held(path):
                raise other_release(where, path.name[8:-5], [])
        setting = [mine]
        if count is not None:
            setting.append(_count_path(locks, count))
            for path in sorted(locks.glob("count-*.lock")):
                if path != setting[-1] and _held(path):
                    raise other_count(where, int(path.name[6:-5]), count, [])
        for path in setting:
            # Shared, which no one refuses: only a holder of the gate tests them exclusively.
            _try(held.enter_context(_open(path)), exclusive=False)
        _take_shards(held, locks, count, shards, holder(count, shards).encode(), where)


def _take_shards(
    held: contextlib.ExitStack,
    locks: Path,
    count: int | None,
    shards: Sequence[int] | None,
    me: bytes,
    where: str,
) -> None:
    whole = held.enter_context(_open(locks / "bot.lock"))
    if shards is None:
        if not _try(whole, exclusive=True):  # by a process of all shards, or of some
            others = [locks / "bot.lock", *sorted(locks.glob("shard-*.lock"))]
            raise refusal(None, where, _holders(others), count)
        _name(whole, me)
        return
    if not _try(whole, exclusive=False):  # held exclusively: by a process of all shards
        raise refusal(shards, where, _holders([locks / "bot.lock"]), count)
    for shard in sorted(set(shards)):
        fd = held.enter_context(_open(_shard_path(locks, shard)))
        if not _try(fd, exclusive=True):
            raise refusal(shards, where, _holders([_shard_path(locks, shard)]), count)
        _name(fd, me)


def _file_limit() -> str:
    try:
        import resource
    except ImportError:  # Windows
        return ""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return "" if soft == resource.RLIM_INFINITY else f" ({soft})"


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


def _wait(fd: int, path: Path) -> None:
    """The gate, exclusively: its holder holds it while it takes its locks."""
    deadline = time.monotonic() + GATE_WAIT_S
    while not _try(fd, exclusive=True):
        if time.monotonic() > deadline:
            raise StorageError(
                f"Another process has held {path} for {GATE_WAIT_S:g} s, which an articlebot "
                "process holds only while it takes its claim; stop the one that holds it (fuser "
                "names it) and start this one again."
            )
        time.sleep(0.05)


def _held(path: Path) -> bool:
    """Whether a live process holds the lock of `path` (shared or not)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return False
    try:
        return not _try(fd, exclusive=True)
    finally:
        os.close(fd)


def _name(fd: int, me: bytes) -> None:
    """Write who holds the lock into its file, for the sentence of the next to try it."""
    os.ftruncate(fd, 0)
    os.pwrite(fd, me, 0)


def _shard_path(locks: Path, shard: int) -> Path:
    return locks / f"shard-{shard}.lock"


def _count_path(locks: Path, count: int) -> Path:
    return locks / f"count-{count}.lock"


def _release_path(locks: Path) -> Path:
    return locks / f"release-{re.sub(r'[^0-9A-Za-z.+_-]', '_', release())}.lock"


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
