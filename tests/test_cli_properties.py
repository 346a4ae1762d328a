"""The command line over inputs hypothesis makes up: whatever the arguments and standard input,
an exit code and no traceback (the real packaged model, loaded once for the session)."""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from text_strategies import TEXT

from index import Library
from index.cli import main
from index.embedding.embedder import Embedder

# the command line: whatever the arguments, an exit code and no traceback


@pytest.fixture(scope="module")
def cli_library(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Library]:
    """A data folder with two articles, opened once for all the examples."""
    library = Library(tmp_path_factory.mktemp("cli-data"), embedder=embedder)
    collection = library.collection()
    collection.add_text(
        "Harbour bridge repainted\n\nThe harbour bridge was repainted green in June.\n\n"
        "Mayor Eric Adams opened the bridge again after the work."
    )
    collection.add_text("Budget vote\n\nThe council approved the water budget on Tuesday.")
    yield library
    library.close()


def looks_like_url(value: str) -> bool:
    return "://" in value or value.lower().startswith(("http:", "https:", "ftp:", "file:"))


ARG = st.one_of(
    st.sampled_from(
        [
            "add",
            "ask",
            "list",
            "remove",
            "rebuild",
            "stats",
            "chat",
            "-",
            "--json",
            "--top-k",
            "--collection",
            "--title",
            "--batch",
            "--data-dir",
            "--reembed",
            "--help",
            "0",
            "1",
            "51",
            "-1",
            "99999999999999999999999",
            "default",
            "",
            " ",
            "/",
            "nope.txt",
            "x.pdf",
        ]
    ),
    TEXT.filter(lambda s: not looks_like_url(s)),
)
COMMAND = st.sampled_from(["add", "ask", "list", "remove", "rebuild", "stats", "chat"])


@contextlib.contextmanager
def captured(stdin: str) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    with (
        mock.patch.object(sys, "stdin", io.StringIO(stdin)),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        yield out, err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(COMMAND, st.lists(ARG, max_size=6), TEXT)
@example("remove", ["99999999999999999999999"], "")
@example("ask", ["\udcff\u202e?"], "")
@example("add", ["-"], "\ud800 Title\n\nBody text with a lone surrogate \udcff in it.")
@example("add", ["-", "--title", "\u202e\u3164"], "Body only")
@example("ask", ["--batch", "-", "--json"], '{"question": "bridge?", "collection": "\\udc80"}\n')
def test_any_arguments_end_with_an_exit_code_and_no_traceback(
    cli_library: Library, command: str, argv: list[str], stdin: str
) -> None:
    args = [command, *argv]
    if "--batch" in args and "-" not in args:
        args = [a for a in args if a != "--batch"]  # no batch files from made-up paths
    with captured(stdin) as (out, err):
        try:
            code = main(args, library=cli_library)
        except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
            code = exc.code if isinstance(exc.code, int) else 2
    assert code in (0, 1, 2)
    assert "Traceback" not in err.getvalue() + out.getvalue()
    if code == 1:
        assert "error" in err.getvalue() + out.getvalue()
    stats = cli_library.collection().stats()
    assert stats.indexed == stats.passages  # whatever happened, the index still matches
