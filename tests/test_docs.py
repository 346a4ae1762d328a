"""The documentation holds: every setting the code reads is in `.env.example` and in the
configuration page, the README stays a short page, every relative link leads to a file, and the
site builds with MkDocs in strict mode."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# A setting's name: what the bot and the command line read from the environment.
SETTING = re.compile(r"\b(?:ARTICLEBOT_[A-Z0-9_]*[A-Z0-9]|DISCORD_TOKEN)\b")
# `NAME=value`, or `# NAME=example` for a setting .env.example leaves commented out.
ASSIGNMENT = re.compile(r"^(?:# )?([A-Z][A-Z0-9_]*)=", re.MULTILINE)
FENCE = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
README_MAX_LINES = 200


def _settings_in_code() -> set[str]:
    """The names in the string literals of `index/` and `bot/`: what the code may read."""
    found: set[str] = set()
    for package in ("index", "bot"):
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    found |= set(SETTING.findall(node.value))
    return found


def _assigned_in_env_example() -> set[str]:
    return set(ASSIGNMENT.findall((ROOT / ".env.example").read_text(encoding="utf-8")))


def _named_in_configure_page() -> set[str]:
    return set(SETTING.findall((DOCS / "configure.md").read_text(encoding="utf-8")))


def _missing(where: str, names: set[str]) -> str:
    return f"missing from {where}: {', '.join(sorted(names))}" if names else ""


def test_code_env_example_and_configure_page_name_the_same_settings() -> None:
    code = _settings_in_code()
    assigned = _assigned_in_env_example()
    example = {name for name in assigned if SETTING.fullmatch(name)}
    page = _named_in_configure_page()
    assert code, "no setting found in index/ or bot/: has the scan lost its way?"
    problems = [
        _missing(".env.example (read by the code)", code - example),
        _missing("docs/configure.md (read by the code)", code - page),
        _missing("the code (set in .env.example, read nowhere)", example - code),
        _missing("the code (named in docs/configure.md, read nowhere)", page - code),
        # compose's own variables (POSTGRES_PASSWORD) are in .env.example: documented too.
        _missing("docs/configure.md (set in .env.example)", assigned - set(_words_of_page())),
    ]
    problems = [p for p in problems if p]
    assert not problems, "\n".join(problems)


def _words_of_page() -> list[str]:
    return re.findall(r"[A-Z][A-Z0-9_]+", (DOCS / "configure.md").read_text(encoding="utf-8"))


def test_readme_is_a_short_page_with_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    lines = text.count("\n") + (not text.endswith("\n"))
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; keep it to a page"
    blocks = [b.strip("`\n ") for b in re.findall(r"```\n(.*?)```", text, re.DOTALL)]
    for command in ("make demo", "make test"):
        assert command in blocks, f"README.md shows no code block of `{command}` alone"


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _relative_links(page: Path) -> list[str]:
    text = INLINE_CODE.sub("", FENCE.sub("", page.read_text(encoding="utf-8")))
    targets = [m.group(1) for m in LINK.finditer(text)]
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files(page: Path) -> None:
    broken = [
        target
        for target in _relative_links(page)
        if not (page.parent / target.partition("#")[0]).exists()
    ]
    assert not broken, f"{page.relative_to(ROOT)} links to missing files: {', '.join(broken)}"


@pytest.mark.slow  # another process
def test_site_builds_in_strict_mode(tmp_path: Path) -> None:
    mkdocs = Path(sys.executable).parent / "mkdocs"
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # a banner, not a warning
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()


# Where the code, the model cards, the units and .env.example send a reader: `docs/PAGE.md`,
# with `, "Heading"` after it when they name a section.
DOCS_POINTER = re.compile(r"docs/([a-z-]+\.md)(?:, \"([^\"]+)\")?")


def _shipped_text_files() -> list[Path]:
    found = [ROOT / ".env.example", *ROOT.glob("compose*.yaml"), *(ROOT / "deploy").rglob("*")]
    for package in ("index", "bot", "tools"):
        found += [*(ROOT / package).rglob("*.py"), *(ROOT / package).rglob("*.md")]
    return sorted(p for p in found if p.is_file())


def _headings(page: Path) -> list[str]:
    return re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.MULTILINE)


def test_shipped_files_point_into_the_docs_not_at_the_readme() -> None:
    """README.md is a page that points into docs/: a pointer to one of its sections goes stale
    when the section moves (as "Past one machine" did to docs/scale.md), and a unit's
    `Documentation=file:///opt/articlebot/README.md` named a file that nothing installs."""
    stale, broken = [], []
    for path in _shipped_text_files():
        text = path.read_text(encoding="utf-8")
        if "README" in text:
            stale.append(str(path.relative_to(ROOT)))
        for page, heading in DOCS_POINTER.findall(text):
            target = DOCS / page
            if not target.is_file() or (heading and heading not in _headings(target)):
                broken.append(f"{path.relative_to(ROOT)}: docs/{page} {heading}".strip())
    assert not stale, f"pointers to README.md in {', '.join(stale)}"
    assert not broken, "pointers to no page or section: " + "; ".join(broken)
