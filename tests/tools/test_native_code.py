"""The test PostgreSQL servers run on every x86-64 CPU: their pgvector (0.6 from the wheel, 0.8
built from third_party/pgvector) and server hold no AVX-512 code outside a CPU check
(tools/native_code.py reads the machine code, so a machine that has AVX-512 catches a
regression too)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from postgres_server import pgvector_08_install, wheel_install

from tools.native_code import scan, unguarded

pytestmark = pytest.mark.slow  # disassembles the test server's binaries


def _server_files() -> list[Path]:
    wheel, built = wheel_install(), pgvector_08_install()
    return [
        wheel / "lib" / "postgresql" / "vector.so",  # pgvector 0.6, from the pgserver wheel
        wheel / "bin" / "postgres",
        built / "lib" / "postgresql" / "vector.so",  # pgvector 0.8, built by the tests
    ]


def test_the_test_servers_pgvector_and_postgres_run_without_avx512() -> None:
    files = _server_files()
    assert all(f.is_file() for f in files), files
    assert [(str(f.path), f.unguarded) for f in unguarded(files)] == []


def _compile(tmp_path: Path, name: str, source: str, *flags: str) -> Path:
    c = tmp_path / f"{name}.c"
    c.write_text(source)
    out = tmp_path / f"lib{name}.so"
    subprocess.run(["gcc", "-O3", "-shared", "-fPIC", *flags, str(c), "-o", str(out)], check=True)
    return out


KERNEL = """
void scale(float *x, int n) { for (int i = 0; i < n; i++) x[i] *= 3.0f; }
"""

DISPATCHED = """
__attribute__((target("avx512f"))) static void scale_avx512(float *x, int n)
{ for (int i = 0; i < n; i++) x[i] *= 3.0f; }
static void scale_plain(float *x, int n) { for (int i = 0; i < n; i++) x[i] *= 3.0f; }
void scale(float *x, int n)
{ if (__builtin_cpu_supports("avx512f")) scale_avx512(x, n); else scale_plain(x, n); }
"""


def test_the_check_fails_a_library_built_for_avx512_and_passes_one_that_dispatches(
    tmp_path: Path,
) -> None:
    built_for_avx512 = _compile(
        tmp_path, "skylake", KERNEL, "-mavx512f", "-mprefer-vector-width=512"
    )
    dispatching = _compile(tmp_path, "dispatch", DISPATCHED, "-mprefer-vector-width=512")
    portable = _compile(tmp_path, "portable", KERNEL)
    assert sum(scan(built_for_avx512).zmm.values()) > 0
    assert sum(scan(dispatching).zmm.values()) > 0
    assert [f.path for f in unguarded([built_for_avx512, dispatching, portable])] == [
        built_for_avx512
    ]
