"""Which int8 export a machine uses, read from its CPU's flags: the choice that makes answers
differ between machines, so each branch is checked here on any machine (the exports themselves
are compared in tests/embedding and tests/answers on every machine)."""

from __future__ import annotations

import pytest

from index.embedding.onnx_export import quantization_target


@pytest.mark.parametrize(
    ("flags", "machine", "export"),
    [
        ({"sse4_2", "avx", "avx2", "fma"}, "x86_64", "avx2"),
        ({"avx2", "avx512f", "avx512bw"}, "x86_64", "avx512"),
        ({"avx2", "avx512f", "avx512bw", "avx512_vnni"}, "x86_64", "avx512_vnni"),
        ({"avx2", "avx512f", "avx512bw", "avx512vnni"}, "x86_64", "avx512_vnni"),
        ({"sse4_2", "avx"}, "x86_64", None),  # no int8 kernels: float32 torch
        (set(), "aarch64", "arm64"),
        (set(), "arm64", "arm64"),
    ],
)
def test_each_cpu_gets_the_int8_export_its_kernels_run(
    flags: set[str], machine: str, export: str | None
) -> None:
    assert quantization_target(flags, machine) == export
