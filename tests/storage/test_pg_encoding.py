"""A PostgreSQL database that is not UTF-8 (SQL_ASCII, what a cluster made with the C locale
gets) is refused in one sentence that says how to make one that is, before anything is stored:
articles are text in any script, and such a database hands text back as bytes."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from postgres_server import PostgresServer

from index.cli import main


def test_a_database_that_is_not_utf8_is_refused_in_one_sentence(
    postgres: PostgresServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    with psycopg.connect(postgres.url, autocommit=True) as db:
        db.execute(
            "CREATE DATABASE ascii_only ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' "
            "TEMPLATE template0"
        )
    url = str(postgres._server.get_uri("ascii_only"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARTICLEBOT_DATABASE_URL", url)
    assert main(["list", "--data-dir", str(tmp_path / "data"), "--json"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: The database ") and err.count("\n") == 1, err
    assert "SQL_ASCII" in err and "ENCODING 'UTF8'" in err
    with psycopg.connect(url) as db:  # nothing was made in it
        assert db.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'"
        ).fetchone() == (0,)
