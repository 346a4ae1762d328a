"""`articlebot` with the test embedder (fakes.py) instead of the model: the real command line in a
real process (its own SQLite connection, FAISS file saves and locks), started in a second.

    python tests/fake_cli.py add FILE... --json     # the data folder from ARTICLEBOT_DATA_DIR
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import HashingTestEmbedder  # noqa: E402

from index import Library  # noqa: E402
from index.cli import main  # noqa: E402
from index.errors import ArticlebotError  # noqa: E402
from index.settings import Settings  # noqa: E402

FAKE_CLI = [sys.executable, str(Path(__file__).resolve())]


def limit_file_size(megabytes: int) -> None:
    """Let this process write no file past `megabytes` (RLIMIT_FSIZE), as a full disk would
    stop it, once what it loads into temporary files (the language identifier's model) is
    loaded: tests/storage/test_full_disk.py's drill where no small filesystem can be mounted."""
    with contextlib.suppress(ImportError, AttributeError):
        from index.text import languages

        languages.identify("warm")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails, not the process
    resource.setrlimit(resource.RLIMIT_FSIZE, (megabytes << 20, megabytes << 20))


def run(argv: list[str]) -> int:
    if os.environ.get("FAKE_CLI_FILE_LIMIT_MB"):
        limit_file_size(int(os.environ["FAKE_CLI_FILE_LIMIT_MB"]))
    settings = Settings.from_env()
    try:
        library = Library(
            settings.data_dir,
            embedder=HashingTestEmbedder(),  # type: ignore[arg-type]
            limits=settings.limits,
        )
    except ArticlebotError as exc:  # as `main` says it when it opens the library itself
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        return main(argv, library)
    finally:
        library.close()


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
