"""The layout a newcomer reads in the README holds: imports run one way between the wings, no
import circle, a short top level in `index/`, and no module too long to read in one sitting."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("index", "bot")
MAX_LINES = 450


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def _imports(path: Path, name: str, *, top_level_only: bool) -> set[str]:
    """The project's modules `path` imports (only those run at import time, if asked)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out |= {f"{base}.{alias.name}" for alias in node.names}
    return {m for m in out if m.split(".")[0] in PACKAGES}


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    modules = _modules()
    return {
        name: {m for m in _imports(path, name, top_level_only=top_level_only) if m in modules}
        - {name}
        for name, path in modules.items()
    }


def _in(module: str, wing: str) -> bool:
    return module == wing or module.startswith(wing + ".")


def test_imports_run_downwards_between_the_wings() -> None:
    forbidden = [
        # What a language is lives in index/text, which reads no other part of the project.
        *[("index.text", f"index.{wing}") for wing in ("ingest", "search", "answers", "storage")],
        *[("index.text", f"index.{wing}") for wing in ("embedding", "ops", "cli", "collection")],
        ("index", "bot"),  # the core never imports the Discord package
        ("index.storage", "index.search"),
        ("index.storage", "index.answers"),
        ("index.ingest", "index.storage"),
    ]
    found = [
        (name, imported)
        for name, imports in _graph(top_level_only=False).items()
        for imported in imports
        for low, high in forbidden
        if _in(name, low) and _in(imported, high)
    ]
    assert found == []
    assert any(_in(m, "index.storage") for m in _graph(top_level_only=False)["index.library"])


def test_no_import_circle() -> None:
    graph = _graph(top_level_only=True)
    # A package's __init__ importing its own modules is how a package shows its face, not a
    # circle: only edges between different modules of different packages or siblings count.
    circles = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if _in(nxt, node) or _in(node, nxt):
                continue  # a package and its own modules
            if state.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    assert circles == []


def test_a_short_top_level_and_no_module_over_450_lines() -> None:
    top = sorted(p.name for p in (ROOT / "index").glob("*.py"))
    assert len(top) <= 10, top
    long = {
        str(path.relative_to(ROOT)): n
        for path in [*_modules().values(), *sorted((ROOT / "tests").rglob("*.py"))]
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


# A table of languages: three or more ISO 639 codes together, in a dict, a set or a string
# split into words; a table of scripts: a Unicode script named in a pattern.
_CODE = re.compile(r"^[a-z]{2,3}$")
_SCRIPT = re.compile(
    r"\\p\{(Han|Hiragana|Katakana|Hangul|Thai|Lao|Khmer|Myanmar|Arabic|Hebrew|Cyrillic|Greek|"
    r"Devanagari|Bengali|Tamil|Telugu|Ethiopic|Georgian|Armenian)"
)


def _language_tables(path: Path) -> list[str]:
    from index.text.languages import known_languages

    known = known_languages()

    def codes(words: list[object]) -> int:
        return sum(isinstance(w, str) and bool(_CODE.match(w)) and w in known for w in words)

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = node.value.split()
            if len(words) >= 3 and codes(list(words)) == len(words):
                found.append(f"{node.lineno}: languages {node.value[:40]!r}")
            if _SCRIPT.search(node.value):
                found.append(f"{node.lineno}: scripts {node.value[:40]!r}")
        elif isinstance(node, ast.Dict | ast.Set):
            keys = node.keys if isinstance(node, ast.Dict) else node.elts
            values = [k.value for k in keys if isinstance(k, ast.Constant)]
            if codes(values) >= 3:
                found.append(f"{node.lineno}: languages {values[:4]}")
    return found


def test_languages_and_scripts_are_tabled_only_in_index_text() -> None:
    # Everything the project knows of a language or a script is in one package: its profile
    # (index/text/profile.py). A table elsewhere is a second answer to the same question.
    found = {
        str(path.relative_to(ROOT)): tables
        for name, path in _modules().items()
        if not _in(name, "index.text") and (tables := _language_tables(path))
    }
    assert found == {}


def test_the_health_server_does_not_import_the_bot_that_starts_it() -> None:
    """bot/health.py is handed what it reads (the client, the library, the metrics): it imports
    nothing of bot/client.py, not even for typing, so the two never form a circle."""
    modules = _modules()
    imported = _imports(modules["bot.health"], "bot.health", top_level_only=False)
    assert not any(_in(m, "bot.client") for m in imported)
    assert any(
        _in(m, "bot.health")
        for m in _imports(modules["bot.client"], "bot.client", top_level_only=True)
    )
