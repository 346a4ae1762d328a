"""The flat index's file, read without FAISS: what the installed faiss writes for a flat index is
recognised byte for byte, and anything else (an IVF index, a field changed, a byte more or less)
is not, so restore never hands a crafted file to FAISS's reader."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from index.search.flat_file import is_flat_index
from index.search.vectors import VectorIndex

DIM = 16


def saved(tmp_path: Path, count: int, kind: str = "flat") -> Path:
    rng = np.random.default_rng(count)
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    index = VectorIndex.build(
        vectors,
        np.arange(10, 10 + count),
        model="m",
        dim=DIM,
        kind=kind,  # type: ignore[arg-type]
    )
    path = tmp_path / f"{kind}-{count}.faiss"
    index.save(path)
    return path


@pytest.mark.parametrize("count", [0, 1, 7, 300])
def test_what_faiss_writes_for_a_flat_index_is_recognised_and_loads(
    tmp_path: Path, count: int
) -> None:
    path = saved(tmp_path, count)
    assert is_flat_index(path)
    assert len(VectorIndex.load(path, model="m", dim=DIM)) == count


def test_an_ivf_index_is_not_taken_for_one(tmp_path: Path) -> None:
    assert not is_flat_index(saved(tmp_path, 400, kind="ivf"))


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b[:-1],  # a byte less
        lambda b: b + b"\0",  # a byte more
        lambda b: b[:4] + struct.pack("<i", DIM + 1) + b[8:],  # the outer dimension
        lambda b: b[:8] + struct.pack("<q", 2**39) + b[16:],  # the outer count
        lambda b: b[:37] + b"IxF2" + b[41:],  # another kind of index inside
        lambda b: b[:33] + b"\x01\x00\x00\x00" + b[37:],  # another metric
        lambda b: b"IwSq" + b[4:],  # another kind outside
        lambda b: b[:74] + struct.pack("<Q", 2**40) + b[82:],  # the number of floats
        lambda b: b[:-64] + struct.pack("<Q", 9) + b[-56:],  # the number of ids
    ],
)
def test_any_change_makes_it_something_else(tmp_path: Path, change: object) -> None:
    path = saved(tmp_path, 7)
    data = path.read_bytes()
    changed = change(data)  # type: ignore[operator]
    assert changed != data
    path.write_bytes(changed)
    assert not is_flat_index(path)
