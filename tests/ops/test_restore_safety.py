"""A backup folder handed over by anyone cannot make `articlebot restore` reach past its folders:
each hostile backup below (a link out, a special file, a manifest that names a file elsewhere,
a database with triggers, views, extra tables or another schema version, every malformed
manifest) is refused in one sentence, within seconds, with nothing written or opened outside the
new folder and nothing left behind; two restores into one folder at once give one whole copy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hostile_backups import library, manifest_of, refused, write_manifest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index.cli import main
from index.errors import ArticlebotError
from index.ops.manifest import read_manifest
from index.ops.restore import restore


def test_a_pristine_copy_restores_and_answers_as_its_source(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["restore", str(work / "backup"), "--data-dir", str(work / "new")]) == 0
    capsys.readouterr()
    listed = []
    for folder in (work / "data", work / "new"):
        assert main(["list", "--data-dir", str(folder), "--json"]) == 0
        listed.append(json.loads(capsys.readouterr().out))
    assert listed[0] == listed[1] and len(listed[0]) == 3
    original, copy = library(work / "data"), library(work / "new")
    try:
        question = "When will the pier open?"
        expected = original.collection().ask(question).to_json()
        assert copy.collection().ask(question).to_json() == expected
    finally:
        original.close()
        copy.close()


# links and special files


def test_a_link_to_its_own_folder_and_a_name_climbing_through_it(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    backup_dir = work / "backup"
    (backup_dir / "d").symlink_to(backup_dir / "indexes", target_is_directory=True)
    manifest = manifest_of(backup_dir)
    data = (work / "outside.txt").read_bytes()
    manifest["files"]["d/../../outside.txt"] = {
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    write_manifest(backup_dir, manifest)
    err = refused(work, capsys)
    assert "symbolic link" in err
    (backup_dir / "d").unlink()  # without the link, the name alone is refused
    err = refused(work, capsys)
    assert "not a file of a data folder" in err


@pytest.mark.parametrize("kind", ["file link", "folder link", "fifo", "socket"])
def test_links_pipes_and_sockets_are_refused(
    work: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    indexes = work / "backup" / "indexes"
    with contextlib.ExitStack() as stack:
        if kind == "file link":
            (indexes / "extra").symlink_to(work / "outside.txt")
        elif kind == "folder link":
            (indexes / "up").symlink_to(work, target_is_directory=True)
        elif kind == "fifo":
            os.mkfifo(indexes / "pipe")
        else:
            sock = stack.enter_context(socket.socket(socket.AF_UNIX))
            sock.bind(str(indexes / "sock"))
        err = refused(work, capsys)
    assert ("symbolic link" in err) if "link" in kind else ("device, pipe or socket" in err)


# names the manifest gives


@pytest.mark.parametrize(
    "name",
    ["../outside.txt", "/etc/passwd", "indexes/../../outside.txt", "indexes/x.faiss\x00", "x.txt"],
)
def test_files_named_outside_a_data_folder_are_refused(
    work: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    manifest = manifest_of(work / "backup")
    manifest["files"][name] = {"bytes": 8, "sha256": "0" * 64}
    write_manifest(work / "backup", manifest)
    assert "not a file of a data folder" in refused(work, capsys)


def test_table_counts_never_open_a_database_elsewhere(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names in the table counts are the backed-up databases' only: the source's store is
    never opened (no -wal or -shm beside it, its bytes and time unchanged)."""
    store = work / "data" / "articlebot.db"
    for name in (str(store), "../data/articlebot.db", "articlebot.db"):
        manifest = manifest_of(work / "backup")
        manifest["tables"] = {name: {"articles": 3}}
        write_manifest(work / "backup", manifest)
        assert "not a backed-up file" in refused(work, capsys)
    manifest["tables"] = {"settings.db": {"settings": 0, "nosuch": 5}}
    write_manifest(work / "backup", manifest)
    assert "does not hold the rows its manifest counts" in refused(work, capsys)


# malformed manifests


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"kind": "data folder", "schema_version": 6, "files": []}', "list of files"),
        ("not json", "not JSON"),
        (b"\xff\xfe{}", "not JSON"),
        ('{"kind": "data folder", "schema_version": NaN, "files": {}}', "not JSON"),
    ],
)
def test_malformed_manifests_are_one_sentence(
    work: Path, capsys: pytest.CaptureFixture[str], raw: str | bytes, said: str
) -> None:
    path = work / "backup" / "manifest.json"
    path.write_bytes(raw if isinstance(raw, bytes) else raw.encode())
    assert said in refused(work, capsys)


COUNTS = "does not hold the articles its manifest counts"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda m: m.update(tables=[["settings.db", 1]]), "table counts is not an object"),
        (lambda m: m.update(collections=["default"]), "collections is not an object"),
        (lambda m: m["files"].pop("articlebot.db"), "lists no articlebot.db"),
        (lambda m: m.update(schema_version=True), "schema version"),
        (lambda m: m.update(schema_version=0), "schema version"),
        # any name is a collection's, if the restored store holds it
        (lambda m: m["collections"].update({"a\x00b": {"articles": 1, "passages": 1}}), COUNTS),
        (lambda m: m["collections"].update({"x" * 5000: {"articles": 1, "passages": 1}}), COUNTS),
        (lambda m: m["collections"]["default"].update(articles=-1), "not a count"),
        (lambda m: m["collections"]["default"].update(articles="3"), "not a count"),
        (lambda m: m["files"]["articlebot.db"].update(sha256="../x"), "not a SHA-256"),
    ],
)
def test_wrong_shapes_are_one_sentence(
    work: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[dict[str, Any]], None],
    said: str,
) -> None:
    manifest = manifest_of(work / "backup")
    change(manifest)
    write_manifest(work / "backup", manifest)
    assert said in refused(work, capsys)


def test_a_manifest_over_its_size_is_refused_unread(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with (work / "backup" / "manifest.json").open("wb") as f:
        f.truncate(40 * 2**20)  # sparse: large on paper only
    assert "larger than 32 MB" in refused(work, capsys)


def test_control_characters_are_shown_escaped(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = manifest_of(work / "backup")
    manifest["collections"]["\x1b[2J\x1b]0;owned\x07"] = {"articles": "x", "passages": 0}
    write_manifest(work / "backup", manifest)
    err = refused(work, capsys)
    assert "\x1b" not in err and "\x07" not in err and "\\x1b[2J" in err


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner),
    max_leaves=20,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.sampled_from(["kind", "files", "collections", "tables", "schema_version", "release"]),
    value=json_values,
)
def test_any_value_in_any_field_is_refused_in_one_sentence_or_restored(
    work: Path, pristine: Path, key: str, value: Any
) -> None:
    """Whatever a field holds, restore ends in a domain error (one sentence) or restores."""
    manifest = manifest_of(pristine / "backup")
    manifest[key] = value
    write_manifest(work / "backup", manifest)
    target = work / "new"
    try:
        restore(work / "backup", target)
    except ArticlebotError as error:
        assert "\n" not in str(error) and str(error).endswith((".", ")")), error
        assert not target.exists()
    else:
        shutil.rmtree(target)
    assert sorted(p.name for p in work.iterdir()) == ["backup", "data", "outside.txt"]


@settings(max_examples=200, deadline=None)
@given(name=st.text(min_size=1, max_size=40) | st.from_regex(r"[a-z./]{1,30}", fullmatch=True))
def test_no_file_name_reaches_outside_a_folder(
    name: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("m", numbered=True)
    write_manifest(
        folder,
        {
            "kind": "data folder",
            "schema_version": 6,
            "files": {
                "articlebot.db": {"bytes": 1, "sha256": "0" * 64},
                name: {"bytes": 1, "sha256": "0" * 64},
            },
        },
    )
    try:
        manifest = read_manifest(folder)
    except ArticlebotError as error:
        assert "\n" not in str(error)
        return
    for accepted in manifest.files:
        resolved = (folder / accepted).resolve()
        assert resolved.is_relative_to(folder.resolve()) and ".." not in Path(accepted).parts


tree_entries = st.lists(
    st.tuples(
        st.sampled_from(["", "indexes/", "indexes/deep/", "sub/"]),
        st.from_regex(r"[a-z][a-z.]{0,7}", fullmatch=True),
        st.sampled_from(["file", "folder", "link inside", "link outside", "fifo"]),
    ),
    max_size=4,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tree=tree_entries)
def test_any_tree_is_restored_within_its_folder_or_refused(
    work: Path, pristine: Path, tree: list[tuple[str, str, str]]
) -> None:
    """Files, folders, links and pipes added anywhere in a backup: refused in one sentence when
    anything is not a plain file or folder, else restored; never a byte written outside."""
    backup_dir = work / "backup"
    shutil.rmtree(backup_dir)
    shutil.copytree(pristine / "backup", backup_dir)
    special = False
    for folder, name, kind in tree:
        path = backup_dir / folder / name
        if path.is_symlink() or path.exists():
            continue  # a name taken already (writing to a pipe made under it would wait forever)
        with contextlib.suppress(OSError):  # a folder's name taken by a file: as it is
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "file":
                path.write_text("extra")
            elif kind == "folder":
                path.mkdir()
            elif kind == "fifo":
                os.mkfifo(path)
                special = True
            else:
                target = backup_dir / "indexes" if kind == "link inside" else work / "outside.txt"
                path.symlink_to(target)
                special = True
    outside = (work / "outside.txt").read_bytes(), (work / "outside.txt").stat().st_mtime_ns
    try:
        restore(backup_dir, work / "new")
    except ArticlebotError as error:
        assert special, error
        assert "\n" not in str(error) and "plain files only" in str(error)
        assert not (work / "new").exists()
    else:
        assert not special
        assert all(p.is_file() or p.is_dir() for p in (work / "new").rglob("*"))
        assert not any(p.is_symlink() for p in (work / "new").rglob("*"))
        shutil.rmtree(work / "new")
    assert (
        (work / "outside.txt").read_bytes(),
        (work / "outside.txt").stat().st_mtime_ns,
    ) == outside
    assert sorted(p.name for p in work.iterdir()) == ["backup", "data", "outside.txt"]


def test_an_unreadable_backup_file_is_blamed_on_the_backup(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from index.ops import restore as restoring

    (work / "backup" / "settings.db").chmod(0)
    # Root reads any file whatever its mode: the refusal the kernel gives anyone else is given
    # here by the call that opens it.
    real_open = os.open

    def open_as_a_user(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if str(path).endswith("settings.db") and not flags & os.O_WRONLY:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(restoring.os, "open", open_as_a_user)
    err = refused(work, capsys)
    assert "Cannot read" in err and "backup" in err and "new" not in err.split("(")[0]


def test_a_folder_turned_into_a_link_after_the_check_is_not_followed(
    work: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were `indexes/` swapped for a link once the backup was walked (another process racing
    the restore), nothing is read through it: the indexes are built from the restored store,
    into a folder of the new data folder's own."""
    from index.ops import restore as restoring

    elsewhere = work / "backup" / "moved"  # inside the backup: no resolving finds it out
    shutil.move(work / "backup" / "indexes", elsewhere)
    (work / "backup" / "indexes").symlink_to(elsewhere, target_is_directory=True)
    monkeypatch.setattr(restoring, "_refuse_special_files", lambda *args: None)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    assert main(["restore", str(work / "backup"), "--data-dir", str(work / "new")]) == 0
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before
    indexes = work / "new" / "indexes"
    assert indexes.is_dir() and not any(p.is_symlink() for p in work.joinpath("new").rglob("*"))
    assert sorted(p.name for p in indexes.iterdir() if p.suffix != ".lock") == [
        "default.bm25.npz",
        "default.faiss",
        "default.json",
    ]
