"""One export of the model per machine: kept in the user's model cache, shared by every data
folder and process, made once even when two processes start together on an empty cache; a data
folder of an earlier release, with its own `models/`, still opens."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from index.cli import main
from index.embedding import e5, e5_weights, onnx_export
from index.embedding.embedder import Embedder
from index.embedding.registry import MULTILINGUAL_E5_SMALL
from index.errors import BadInput
from index.settings import Settings, model_cache

DEMO = Path(__file__).resolve().parents[2] / "index" / "demo" / "tool-library.md"
QUESTION = "How much did the council approve for the renovation?"


def test_the_model_cache_is_the_users_own_unless_another_is_chosen() -> None:
    home = {"HOME": "/home/ann"}
    assert model_cache(home) == Path("/home/ann/.cache/articlebot")
    assert model_cache({**home, "XDG_CACHE_HOME": "/var/cache/ann"}) == Path(
        "/var/cache/ann/articlebot"
    )
    # The XDG rule: a relative XDG_CACHE_HOME is ignored.
    assert model_cache({**home, "XDG_CACHE_HOME": "cache"}) == Path("/home/ann/.cache/articlebot")
    chosen = {**home, "XDG_CACHE_HOME": "/var/cache/ann", "ARTICLEBOT_MODEL_CACHE": "/srv/models"}
    assert model_cache(chosen) == Path("/srv/models")
    settings = Settings.from_env({**chosen, "ARTICLEBOT_DATA_DIR": "/srv/data"})
    assert settings.model_cache == Path("/srv/models")
    listed = (Path(__file__).resolve().parents[2] / ".env.example").read_text()
    assert "\n# ARTICLEBOT_MODEL_CACHE=" in listed  # commented out: the image sets its own


def test_the_tests_and_the_processes_they_start_keep_the_model_in_the_test_cache(
    models_cache: Path,
) -> None:
    # Never the user's own ~/.cache/articlebot: not in this process, and not in the processes
    # the tests start with the ARTICLEBOT_ settings left out.
    assert Settings.from_env().model_cache == models_cache
    stripped = {k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")}
    assert model_cache(stripped).resolve() == models_cache.resolve()


def _refuse_to_export(monkeypatch: pytest.MonkeyPatch) -> None:
    """Making an export (a minute of work) fails the test: the export must come from a cache."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the model was exported again")

    monkeypatch.setattr(onnx_export, "_export_into", refuse)  # all-MiniLM-L6-v2's
    monkeypatch.setattr(e5, "_export_in_child", refuse)  # e5's, made in a process of its own
    monkeypatch.setattr(e5, "_export_into", refuse)
    monkeypatch.setattr(e5_weights, "unpack", refuse)
    monkeypatch.setattr(e5_weights, "convert", refuse)


def _session_export(embedder: Embedder) -> Path:
    folder = getattr(embedder, "folder", None)
    if not isinstance(folder, Path):
        pytest.skip("this CPU runs the model in torch: it has no int8 export to share")
    return folder


def test_a_fresh_data_folder_answers_its_first_question_without_an_export(
    embedder: Embedder,
    models_cache: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _session_export(embedder)  # the cache holds the export the session made
    _refuse_to_export(monkeypatch)
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    monkeypatch.setenv("ARTICLEBOT_MODEL_CACHE", str(models_cache))
    for fresh in (tmp_path / "first", tmp_path / "second"):
        assert main(["add", str(DEMO), "--data-dir", str(fresh), "--json"]) == 0
        assert main(["ask", QUESTION, "--data-dir", str(fresh), "--json"]) == 0
        answer = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert not answer["abstained"] and "18,000" in answer["answer"]
        assert not (fresh / "models").exists()  # nothing of the model in the data folder


def test_two_processes_starting_together_on_an_empty_cache_export_once(
    embedder: Embedder, tmp_path: Path
) -> None:
    """Two real `articlebot add` processes, each with its own data folder, start at the same
    moment on an empty cache: one exports, the other waits for it, and both answer with it.

    The minute of exporting is stood in for, inside each process, by a copy of the export the
    session made (with a pause, so that the second process meets the lock): what is tested is
    who exports and when, not the export itself (`test_e5.py` checks that). Both wait for each
    other after their imports, so that they start within milliseconds, well inside the pause:
    without the lock, both would export."""
    made = _session_export(embedder)
    cache, log = tmp_path / "cache", tmp_path / "exports.log"
    child = """
import shutil, sys, time
from pathlib import Path
from index.embedding import e5

log, made, me = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]

def export_into(work, *args, **kwargs):
    with log.open("a") as f:
        f.write("started\\n")
    time.sleep(2)
    shutil.copytree(made, work, dirs_exist_ok=True)
    with log.open("a") as f:
        f.write("finished\\n")

e5._export_in_child = export_into
from index.cli import main

(log.parent / f"ready-{me}").touch()  # a barrier: start together
deadline = time.monotonic() + 120
while len(list(log.parent.glob("ready-*"))) < 2 and time.monotonic() < deadline:
    time.sleep(0.005)
sys.exit(main(sys.argv[4:]))
"""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("ARTICLEBOT_")},
        "ARTICLEBOT_MODEL_CACHE": str(cache),
        "ARTICLEBOT_MODEL": embedder.name,
    }
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", child, str(log), str(made), str(i)]
            + ["add", str(DEMO), "--data-dir", str(tmp_path / f"data-{i}"), "--json"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    results = [p.communicate(timeout=300) for p in processes]
    for process, (out, err) in zip(processes, results, strict=True):
        assert process.returncode == 0, err
        assert json.loads(out)["added"] is True
    assert log.read_text().splitlines() == ["started", "finished"]
    exports = [p.name for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert exports == [made.name]


def test_a_data_folder_of_an_earlier_release_reads_its_own_export(
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A folder whose `models/` holds the export this release would make opens with it, as it
    is: no export, nothing written to the cache."""
    from index import Library

    made = _session_export(embedder)
    data = tmp_path / "data"
    shutil.copytree(made, data / "models" / made.name)
    cache = tmp_path / "cache"
    _refuse_to_export(monkeypatch)
    library = Library(data, model_path=embedder.name, model_cache=cache)
    try:
        collection = library.collection()
        collection.add_text(DEMO.read_text())
        answer = collection.ask(QUESTION)
        assert not answer.abstained and "18,000" in answer.answer
        assert library.embedder.folder == data / "models" / made.name  # type: ignore[attr-defined]
    finally:
        library.close()
    assert not cache.exists() or not list(cache.iterdir())


@pytest.mark.skipif(
    bool(MULTILINGUAL_E5_SMALL.unavailable_reason()), reason="multilingual-e5-small is not here"
)
def test_a_model_cache_that_cannot_be_written_is_refused_in_a_sentence(tmp_path: Path) -> None:
    from index import Library

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    library = Library(tmp_path / "data", model_cache=blocker / "cache")
    try:
        with pytest.raises(BadInput, match=r"^The model cache .* set ARTICLEBOT_MODEL_CACHE to a"):
            _ = library.embedder
    finally:
        library.close()
