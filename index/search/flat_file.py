"""Whether a FAISS file is, byte for byte, the flat index this project writes: an IndexIDMap2
around an IndexFlatIP, nothing else.

FAISS's reader trusts the file it is given (sizes, counts, kinds of index nested in each other)
and is not hardened against a crafted one. A restored backup's index files come from anyone, so
restore hands a file to FAISS only once it has been read here, without FAISS, and found to hold
exactly what `faiss.write_index` writes for a flat index: every field where it belongs, every
count agreeing, nothing after the end. Anything else (an IVF index too: its format nests more
than is worth checking by hand) is left out, and built again from the restored store.

The layout, as faiss 1.x writes it (little-endian; checked against the installed faiss by
tests/search/test_flat_file.py):
    "IxM2" header  "IxFI" header  u64 n*d  f32[n*d]  u64 n  i64[n]
    header = i32 d, i64 ntotal, i64 1<<20, i64 1<<20, u8 is_trained, i32 metric (0: inner product)
"""

from __future__ import annotations

import struct
from pathlib import Path

__all__ = ["is_flat_index"]

_HEADER = struct.Struct("<iqqqBi")
_COUNT = struct.Struct("<Q")
_DUMMY = 1 << 20
_INNER_PRODUCT = 0
MAX_DIM = 65_536


def is_flat_index(path: Path) -> bool:
    """Whether `path` holds exactly an IndexIDMap2(IndexFlatIP) as FAISS writes one."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(2 * (4 + _HEADER.size) + _COUNT.size)
            if len(head) != 2 * (4 + _HEADER.size) + _COUNT.size:
                return False
            outer, inner = _header(head, 0, b"IxM2"), _header(head, 4 + _HEADER.size, b"IxFI")
            if outer is None or inner is None or outer != inner:
                return False
            dim, count = outer
            (floats,) = _COUNT.unpack_from(head, 2 * (4 + _HEADER.size))
            if floats != count * dim:
                return False
            ids_at = len(head) + 4 * floats
            if size != ids_at + _COUNT.size + 8 * count:
                return False
            f.seek(ids_at)
            (ids,) = _COUNT.unpack(f.read(_COUNT.size))
            return bool(ids == count)
    except OSError:
        return False


def _header(data: bytes, at: int, fourcc: bytes) -> tuple[int, int] | None:
    """(d, ntotal) of an index header with `fourcc`, or None when any field is not as written."""
    if data[at : at + 4] != fourcc:
        return None
    dim, total, dummy1, dummy2, trained, metric = _HEADER.unpack_from(data, at + 4)
    if not (0 < dim <= MAX_DIM and 0 <= total < 2**40):
        return None
    if (dummy1, dummy2, trained, metric) != (_DUMMY, _DUMMY, 1, _INNER_PRODUCT):
        return None
    return dim, total
