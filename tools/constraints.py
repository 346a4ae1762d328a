"""constraints.txt: every package `pip install .` installs, pinned at the version installed here.

    python -m tools.constraints           # writes constraints.txt at the checkout's root

The Dockerfile and `make` install with `pip install -c constraints.txt`, so that an image or a
checkout built again next year gets the packages this release was tested with, and the image of
a release can be built again to roll back to. The pins are the runtime requirements of the
installed articlebot and theirs, followed through the extras they ask for, with the markers read
for this interpreter: no test or lint tool (the `dev` extra), nothing the `+cpu` build of torch
does not ask for (the CUDA build's `nvidia-*` packages). Run it in the virtual environment `make
setup` made, after a change of pyproject.toml's dependencies or an upgrade of one.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

__all__ = ["HEADER", "PATH", "render", "runtime_pins"]

PATH = Path(__file__).resolve().parents[1] / "constraints.txt"
HEADER = """\
# Every package `pip install .` installs, at the version this release was tested with; the
# Dockerfile and the Makefile install with `pip install -c constraints.txt`. Written by
# `python -m tools.constraints` from the virtual environment `make setup` made: run it again
# after changing pyproject.toml's dependencies or upgrading one.
"""


def _wanted(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras | {""})


def runtime_pins(project: str = "articlebot") -> dict[str, str]:
    """Each installed distribution `project` needs at run time, by canonical name, with its
    version as pip writes it in a pin (a local label such as torch's `+cpu` left out: which
    build of torch is installed is the index's choice, which the installers check)."""
    extras_of: dict[str, set[str]] = {}
    pending = [Requirement(line) for line in metadata.requires(project) or []]
    pending = [r for r in pending if _wanted(r, set())]
    while pending:
        requirement = pending.pop()
        name = canonicalize_name(requirement.name)
        known = extras_of.get(name)
        if known is not None and set(requirement.extras) <= known:
            continue
        extras_of[name] = (known or set()) | set(requirement.extras)
        for line in metadata.requires(name) or []:
            needed = Requirement(line)
            if _wanted(needed, extras_of[name]):
                pending.append(needed)
    return {name: metadata.version(name).split("+")[0] for name in sorted(extras_of)}


def render(pins: dict[str, str]) -> str:
    return HEADER + "".join(f"{name}=={version}\n" for name, version in pins.items())


def main() -> int:
    pins = runtime_pins()
    PATH.write_text(render(pins))
    print(f"{PATH}: {len(pins)} packages pinned", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
