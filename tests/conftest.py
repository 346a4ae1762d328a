"""Shared fixtures: one real model per test session, real SQLite and FAISS files in tmp_path."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from postgres_server import PostgresServer, pgvector_08_install  # noqa: E402

from index import Library  # noqa: E402
from index.embedding.embedder import (  # noqa: E402
    E5_MODEL_NAME,
    MINILM_MODEL_NAME,
    Embedder,
    load_embedder,
    quantization_target,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"  # ../shared beside the checkout
SAMPLE = SHARED / "samples" / "000_bcf5d6bb99a2ac0a.txt"
EVAL = SHARED / "eval"


# The int8 exports, kept between test sessions inside the virtual environment (a minute each
# to make); a session outside one keeps them in a temporary folder, removed at its end.
IN_VENV = sys.prefix != sys.base_prefix
if IN_VENV:
    TEST_MODELS = Path(sys.prefix) / "articlebot-test-models"
    TEST_MODELS.mkdir(exist_ok=True)
else:
    _TEMPORARY = Path(tempfile.mkdtemp(prefix="articlebot-test-"))
    atexit.register(shutil.rmtree, _TEMPORARY, ignore_errors=True)
    TEST_MODELS = _TEMPORARY / "articlebot-test-models"
    TEST_MODELS.mkdir()


def _point_the_model_cache_at_the_test_models() -> None:
    """Every library and `articlebot` process of the tests keeps its export in TEST_MODELS,
    never in the user's own cache (~/.cache/articlebot): ARTICLEBOT_MODEL_CACHE says so, and
    for the processes started with the ARTICLEBOT_ settings left out, XDG_CACHE_HOME, whose
    `articlebot` is a link to the same folder."""
    os.environ["ARTICLEBOT_MODEL_CACHE"] = str(TEST_MODELS)
    xdg = TEST_MODELS.with_name(TEST_MODELS.name + "-xdg")
    xdg.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):  # another test session made it first
        (xdg / "articlebot").symlink_to(TEST_MODELS, target_is_directory=True)
    os.environ["XDG_CACHE_HOME"] = str(xdg)


_point_the_model_cache_at_the_test_models()


@pytest.fixture(scope="session")
def models_cache() -> Path:
    return TEST_MODELS


@pytest.fixture(scope="session")
def embedder(models_cache: Path) -> Embedder:
    """The default model, loaded once for the whole session: multilingual-e5-small's int8
    export for this CPU (all-MiniLM-L6-v2's where e5's weights are not installed)."""
    return load_embedder(cache_dir=models_cache)


@pytest.fixture(scope="session")
def minilm_embedder(embedder: Embedder, models_cache: Path) -> Embedder:
    """all-MiniLM-L6-v2, the model of earlier releases (this CPU's int8 export): the model an
    older data folder's collections answer with until they are re-embedded."""
    if embedder.name == MINILM_MODEL_NAME:
        return embedder
    return load_embedder(MINILM_MODEL_NAME, cache_dir=models_cache)


@pytest.fixture(scope="session")
def load_embedding(embedder: Embedder, models_cache: Path) -> Callable[[str], Embedder]:
    """One embedder per model and export kind, made once: all-MiniLM-L6-v2 as "avx2",
    "avx512_vnni", "arm64" or "torch"; multilingual-e5-small as "e5" (its one export for this
    kind of CPU) or "e5-torch"."""
    loaded: dict[str, Embedder] = {}
    native = quantization_target()

    def load(kind: str) -> Embedder:
        name = E5_MODEL_NAME if kind.startswith("e5") else MINILM_MODEL_NAME
        export = kind.removeprefix("e5").removeprefix("-") or native
        session_export = getattr(embedder, "folder", None)
        if (
            name == embedder.name
            and session_export
            and (kind == "e5" or f"-int8-{export}-" in str(session_export))
        ):
            return embedder
        if kind not in loaded:
            if export == "torch":
                loaded[kind] = load_embedder(name, backend="torch")
            else:
                loaded[kind] = load_embedder(
                    name,
                    backend="onnx",
                    cache_dir=models_cache,
                    quantization=export,  # type: ignore[arg-type]
                )
        return loaded[kind]

    return load


@pytest.fixture
def make_library(embedder: Embedder, tmp_path: Path) -> Iterator[Callable[..., Library]]:
    """Open libraries on real data folders under tmp_path, sharing the loaded model."""
    opened: list[Library] = []

    def make(data_dir: Path | None = None, **kwargs: object) -> Library:
        kwargs.setdefault("embedder", embedder)
        library = Library(data_dir or tmp_path / "data", **kwargs)  # type: ignore[arg-type]
        opened.append(library)
        return library

    yield make
    for library in opened:
        library.close()


@pytest.fixture
def library(make_library: Callable[..., Library]) -> Library:
    return make_library()


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A real PostgreSQL 16 with pgvector 0.6 (PyPI pgserver), private to this session: it runs
    on every x86-64 CPU (tests/test_native_code.py reads its machine code)."""
    server = PostgresServer()
    yield server
    server.stop()


@pytest.fixture
def database_url(postgres: PostgresServer) -> str:
    """An empty database of its own for one test."""
    return postgres.new_database()


@pytest.fixture(scope="session")
def postgres_pgvector_08() -> Iterator[PostgresServer]:
    """The same PostgreSQL 16 with pgvector 0.8.0 built from third_party/pgvector for any
    x86-64 CPU (tests/postgres_server.py): the iterative index scans' path."""
    server = PostgresServer(pgvector_08_install())
    yield server
    server.stop()


@pytest.fixture(params=["0.6", "0.8"])
def pgvector_database_url(request: pytest.FixtureRequest) -> str:
    """An empty database on each test server, one per pgvector the backend has a path for."""
    fixture = "postgres" if request.param == "0.6" else "postgres_pgvector_08"
    server: PostgresServer = request.getfixturevalue(fixture)
    return server.new_database()


@pytest.fixture(params=["embedded", "postgres"])
def storage(request: pytest.FixtureRequest) -> str:
    """Each backend: the embedded default (SQLite, FAISS, bm25s) and PostgreSQL with pgvector."""
    return str(request.param)


@pytest.fixture
def make_stored_library(
    storage: str, make_library: Callable[..., Library], request: pytest.FixtureRequest
) -> Callable[..., Library]:
    """make_library on the backend `storage` names: every library of a test shares its data."""
    if storage == "embedded":
        return make_library
    url = request.getfixturevalue("database_url")
    return lambda data_dir=None, **kw: make_library(data_dir, database_url=url, **kw)


def shared_file(path: Path) -> Path:
    """A file of ../shared (development data, not part of the product), or the test is not run.

    A user's clone has no ../shared beside it: the tests that need it are reported as skipped,
    with this reason, and everything else runs on data the tests carry themselves.
    """
    if not path.is_file():
        where = path.relative_to(SHARED)
        pytest.skip(f"needs ../shared/{where}, which is not beside this checkout")
    return path


@pytest.fixture(scope="session")
def sample_text() -> str:
    return shared_file(SAMPLE).read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def squad_dev() -> Path:
    """SQuAD v1.1 dev (../shared/eval), for the answer-quality floors."""
    return shared_file(EVAL / "squad-v1.1-dev.json")


@pytest.fixture(scope="session")
def eval_file() -> Callable[[str], Path]:
    """A file of ../shared/eval by name (the test is not run without it)."""
    return lambda name: shared_file(EVAL / name)


@pytest.fixture(scope="session")
def sample_path() -> Path:
    """The real news article as users paste it (../shared/samples)."""
    return shared_file(SAMPLE)


@pytest.fixture(scope="session")
def cli_models(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A models folder for `articlebot` subprocesses: link it as `<data dir>/models`.

    It offers the int8 ONNX export that the session's `embedder` made (if it made one), so each
    subprocess loads the model in about two seconds instead of exporting it again (a minute).
    """
    shared = tmp_path_factory.mktemp("cli-models")
    export = getattr(embedder, "folder", None)  # only the ONNX backend has one
    if isinstance(export, Path) and export.is_dir():
        (shared / export.name).symlink_to(export, target_is_directory=True)
    return shared


# The two tiers. `make test` runs everything with the real model; `make test-fast` runs the tests
# not marked slow, with ARTICLEBOT_FORBID_REAL_MODEL=1, in well under a minute. A test is slow
# when it needs the real model, a PostgreSQL server or another process; the fixtures below make
# that plain, so a test that asks for one of them is marked without being told.
SLOW_FIXTURES = frozenset(
    {
        "embedder",
        "minilm_embedder",
        "load_embedding",
        "onnx_embedder",
        "torch_library",
        "postgres",
        "postgres_pgvector_08",
        "pgvector_database_url",
        "cli_models",
    }
)
FORBID_REAL_MODEL = os.environ.get("ARTICLEBOT_FORBID_REAL_MODEL") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


class RealModelForbidden(RuntimeError):
    """Raised under ARTICLEBOT_FORBID_REAL_MODEL=1 by anything that would load the model."""


@pytest.fixture(autouse=True, scope="session")
def _forbid_real_model() -> Iterator[None]:
    """Under ARTICLEBOT_FORBID_REAL_MODEL=1 loading the real model raises, and so does starting
    another process, so the fast tier cannot lean on either."""
    if not FORBID_REAL_MODEL:
        yield
        return
    import subprocess

    from index.embedding import e5_weights
    from index.embedding import embedder as module

    def refuse(*args: object, **kwargs: object) -> None:
        raise RealModelForbidden("the fast tier may not load the real model or start a process")

    saved = [
        (module.OnnxEmbedder, "__init__", module.OnnxEmbedder.__init__),
        (module.TorchEmbedder, "__init__", module.TorchEmbedder.__init__),
        (e5_weights, "convert", e5_weights.convert),
        (e5_weights, "unpack", e5_weights.unpack),
        (subprocess.Popen, "__init__", subprocess.Popen.__init__),
    ]
    for owner, name, _ in saved:
        setattr(owner, name, refuse)
    yield
    for owner, name, original in saved:
        setattr(owner, name, original)


@pytest.fixture
def test_library(tmp_path: Path) -> Iterator[Library]:
    """A library on a real data folder with the small deterministic test embedder (fakes.py):
    real SQLite, FAISS and BM25, no model. For what storage and the collection logic do, not
    for answer quality."""
    from fakes import HashingTestEmbedder

    library = Library(tmp_path / "data", embedder=HashingTestEmbedder())  # type: ignore[arg-type]
    yield library
    library.close()
