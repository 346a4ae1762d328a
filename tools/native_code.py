"""Which native libraries would die on a CPU without AVX-512.

    python -m tools.native_code [PATH ...]    # default: every shared library installed

A library compiled for AVX-512 (`-march=skylake-avx512`, say) runs its zmm instructions on any
CPU and dies there with SIGILL where the CPU lacks them; a library that dispatches keeps them in
functions chosen at run time after asking the CPU (`cpuid`, or GCC's `__cpu_model`). So a library
passes when it holds no zmm instruction, or when every function that holds one is named as a
dispatch target (its name mentions avx512, skylakex or the like) or asks the CPU itself before
running them (libgfortran's matmul inlines its AVX-512 variant behind `__cpu_model`), and the
library asks the CPU.
Reading the code is what catches a regression on a machine that has AVX-512 itself, where
running it would pass. The disassembly is binutils' `objdump`.

The verdict is exact for a library that keeps its function names (pgvector's `vector.so`, a
PostgreSQL server). A stripped library that dispatches through a table of function pointers
(NumPy, ONNX Runtime, OpenBLAS) shows its AVX-512 kernels under whatever name precedes them, so
for those a listing is a place to look, not a verdict.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Finding", "scan", "unguarded"]

_FUNCTION = re.compile(r"^[0-9a-f]+ <(.+)>:$")
# How dispatched variants are named: GCC's target_clones suffixes (foo.avx512f), hand-written
# kernels (foo_avx512, FooAvx512, ..._skx, ..._knl), oneDNN's jit tables, MLAS' Avx512Core.
_DISPATCH_NAME = re.compile(
    r"avx512|avx10|skx|skylakex|knl|cpx|cooperlake|icx|icelake|spr|sapphirerapids|amx|zmm|zen4",
    re.IGNORECASE,
)
_CPU_CHECK = re.compile(r"\bcpuid\b|__cpu_model|__cpu_indicator_init|__get_cpuid|xgetbv")


@dataclass(frozen=True)
class Finding:
    """AVX-512 code in one library: per function, how many zmm instructions."""

    path: Path
    zmm: Counter[str]  # function -> zmm instructions in it
    checks_cpu: bool
    checking: frozenset[str] = frozenset()  # functions that ask the CPU themselves

    @property
    def unguarded(self) -> dict[str, int]:
        """Functions that run zmm instructions with nothing to show they are dispatched."""
        if not self.checks_cpu:
            return dict(self.zmm)
        return {
            f: n
            for f, n in self.zmm.items()
            if not _DISPATCH_NAME.search(f) and f not in self.checking
        }


def scan(path: Path) -> Finding:
    """Disassemble one shared library or executable and count its zmm instructions.

    The disassembly is read as it streams (a large library's runs to gigabytes of text)."""
    zmm: Counter[str] = Counter()
    checking: set[str] = set()
    function = "?"
    with subprocess.Popen(
        ["objdump", "-d", "--no-show-raw-insn", "-C", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as objdump:
        assert objdump.stdout is not None
        for line in objdump.stdout:
            head = _FUNCTION.match(line.rstrip("\n"))
            if head:
                function = head.group(1)
                continue
            if "%zmm" in line:
                zmm[function] += 1
            elif _CPU_CHECK.search(line):
                checking.add(function)
    if objdump.returncode:
        raise subprocess.CalledProcessError(objdump.returncode, "objdump")
    return Finding(path, zmm, bool(checking), frozenset(checking))


def unguarded(paths: Iterable[Path]) -> list[Finding]:
    """The libraries among `paths` that hold AVX-512 code outside any CPU dispatch."""
    return [f for f in map(scan, paths) if f.unguarded]


def _installed() -> list[Path]:
    prefix = Path(sys.prefix)
    return sorted(p for p in prefix.rglob("*.so*") if p.is_file() and ".so" in p.name)


def main(argv: Sequence[str] | None = None) -> int:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])] or _installed()
    bad = 0
    for path in paths:
        try:
            finding = scan(path)
        except subprocess.CalledProcessError:
            continue  # not an object file objdump reads
        if not finding.zmm:
            continue
        loose = finding.unguarded
        bad += bool(loose)
        total = sum(finding.zmm.values())
        verdict = f"{len(loose)} functions with no CPU check in sight" if loose else "dispatched"
        print(f"{path}: {total} zmm instructions, {verdict}")
    print(f"{bad} of {len(paths)} libraries hold AVX-512 code with no CPU check in sight")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
