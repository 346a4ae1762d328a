"""The layout a newcomer reads in the README holds: imports run one way between the wings (and
never from the package into `tools/`, which the wheel does not hold), no import circle, a short
top level in `index/`, and no module too long to read in one sitting, in the package or in
`tools/`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("index", "bot")  # what ships
TOOLS = ("tools",)  # what only developers run, from a checkout
MAX_LINES = 400  # a module of the package or of the tools
MAX_TEST_LINES = 450  # a test file


def _modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
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
    return {m for m in out if m.split(".")[0] in PACKAGES + TOOLS}


def _graph(*, top_level_only: bool) -> dict[str, set[str]]:
    modules = _modules(PACKAGES + TOOLS)
    return {
        name: {m for m in _imports(path, name, top_level_only=top_level_only) if m in modules}
        - {name}
        for name, path in modules.items()
    }


def _in(module: str, wing: str) -> bool:
    return module == wing or module.startswith(wing + ".")


FORBIDDEN = [
    # What a language is lives in index/text, which reads no other part of the project.
    *[("index.text", f"index.{wing}") for wing in ("ingest", "search", "answers", "storage")],
    *[("index.text", f"index.{wing}") for wing in ("embedding", "ops", "cli", "collection")],
    ("index", "bot"),  # the core never imports the Discord package
    ("index.storage", "index.search"),
    ("index.storage", "index.answers"),
    ("index.ingest", "index.storage"),
    # The wheel holds no tools/: an import of them from the package fails where it is installed.
    ("index", "tools"),
    ("bot", "tools"),
]


def _wrong_way(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    return [
        (name, imported)
        for name, imports in graph.items()
        for imported in imports
        for low, high in FORBIDDEN
        if _in(name, low) and _in(imported, high)
    ]


def test_imports_run_downwards_between_the_wings() -> None:
    graph = _graph(top_level_only=False)
    assert _wrong_way(graph) == []
    assert any(_in(m, "index.storage") for m in graph["index.library"])
    assert any(_in(m, "index") for m in graph["tools.fit_declines"])  # tools read the package


def test_an_import_of_the_tools_from_the_package_is_found(tmp_path: Path) -> None:
    # Late or at the top, of a module or from a package: each is read as the import it is.
    sources = {
        "index/answers/late.py": "def f():\n    from tools.fit_declines import fit\n",
        "index/top.py": "import tools.reader_eval\n",
        "bot/from_package.py": "from tools import reader_eval\n",
    }
    graph = {}
    for relative, source in sources.items():
        path = tmp_path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        name = ".".join(Path(relative).with_suffix("").parts)
        graph[name] = _imports(path, name, top_level_only=False)
    assert sorted(_wrong_way(graph)) == [
        ("bot.from_package", "tools"),
        ("bot.from_package", "tools.reader_eval"),
        ("index.answers.late", "tools.fit_declines"),
        ("index.answers.late", "tools.fit_declines.fit"),
        ("index.top", "tools.reader_eval"),
    ]


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


def test_a_short_top_level_and_no_module_over_400_lines() -> None:
    top = sorted(p.name for p in (ROOT / "index").glob("*.py"))
    assert len(top) <= 10, top
    limits = [
        *[(path, MAX_LINES) for path in _modules(PACKAGES + TOOLS).values()],
        *[(path, MAX_TEST_LINES) for path in sorted((ROOT / "tests").rglob("*.py"))],
    ]
    long = {
        str(path.relative_to(ROOT)): n
        for path, limit in limits
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > limit
    }
    assert long == {}


# What counts as a table of languages or scripts, in every form it has taken: ISO 639 codes
# together (three in a dict, a set, a tuple, a list or a spaced string; two compared with one
# value); a Unicode script or block named in a pattern (`\p{Han}`, `\p{Script=Arabic}`,
# `\p{InCJK_Unified_Ideographs}`); a range of letters beyond ASCII in a pattern (`[\u4e00-\u9fff]`)
# or in a comparison (`"\u0600" <= ch <= "\u06ff"`, `0x4E00 <= ord(ch)`) or a `range`; and a
# script read from a character's Unicode name.
_CODE = re.compile(r"^[a-z]{2,3}$")
_PROPERTY = re.compile(
    r"\\[pP]\{\^?(?:(?:Script_Extensions|Script|scx|sc|Block|blk)[=:])?([^}]+)\}"
)
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x\{([0-9a-fA-F]+)\})")
_RANGE = re.compile(r"(.)-(.)", re.DOTALL)
_ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
_NO_SCRIPT = frozenset({"Common", "Inherited", "Zyyy", "Zinh", "Zzzz", "Unknown"})


def _is_script_or_block(name: str) -> bool:
    """Whether regex reads `name` as a Unicode script or block (not a category like L or N)."""
    import regex

    name = name.strip()
    for pattern in (
        rf"\p{{Script={name}}}",
        rf"\p{{Script={name.removeprefix('Is')}}}",
        rf"\p{{Block={name.removeprefix('In')}}}",
    ):
        try:
            regex.compile(pattern)
        except regex.error:
            continue
        return name not in _NO_SCRIPT
    return False


def _spans_letters(low: int, high: int) -> bool:
    """Whether a range beyond ASCII holds letters: a script's, not a run of punctuation."""
    import unicodedata

    if high < 0x80 or low > high or high > 0x10FFFF:
        return False
    step = max(1, (high - low) // 4096)
    return any(unicodedata.category(chr(c)).startswith("L") for c in range(low, high + 1, step))


def _unescaped(text: str) -> str:
    def char(match: re.Match[str]) -> str:
        code = int(next(g for g in match.groups() if g), 16)
        return chr(code) if code <= 0x10FFFF else match.group()

    return _ESCAPE.sub(char, text)


def _codes(values: list[object]) -> int:
    from index.text.languages import known_languages

    known = known_languages()
    return sum(isinstance(w, str) and bool(_CODE.match(w)) and w in known for w in values)


def _constants(nodes: list[ast.expr | None]) -> list[object]:
    return [n.value for n in nodes if isinstance(n, ast.Constant)]


def _in_a_string(text: str) -> list[str]:
    """Codes in a spaced string; scripts, blocks and ranges of letters in a pattern."""
    words = text.split()
    spaced = len(words) >= 3 and _codes(list(words)) == len(words)
    found = [f"languages {text[:40]!r}"] if spaced else []
    found += [
        f"scripts {m.group()!r}" for m in _PROPERTY.finditer(text) if _is_script_or_block(m[1])
    ]
    if "[" in text:
        found += [
            f"letters {m.group()!r}"
            for m in _RANGE.finditer(_unescaped(text))
            if _spans_letters(ord(m[1]), ord(m[2]))
        ]
    return found


def _in_a_collection(node: ast.Dict | ast.Set | ast.Tuple | ast.List) -> list[str]:
    """Three codes or more as a dict's keys, or as the words of a set, tuple or list (a
    collection that also holds other words holds codes by chance: "ka", "lo" among syllables)."""
    values = _constants(node.keys if isinstance(node, ast.Dict) else list(node.elts))
    words = [v for v in values if isinstance(v, str)]
    if _codes(values) >= 3 and (isinstance(node, ast.Dict) or _codes(words) == len(words)):
        return [f"languages {values[:4]}"]
    return []


def _ordinal(node: ast.expr, numbers: bool) -> int | None:
    """A character beyond ASCII, or a number (where it is compared with `ord(...)`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) == 1:
        return ord(node.value) if not node.value.isascii() else None
    if numbers and isinstance(node, ast.Constant) and type(node.value) is int:
        return int(node.value)
    return None


def _in_a_comparison(node: ast.Compare) -> list[str]:
    """Two codes or more a value is looked for in; characters beyond ASCII as bounds."""
    sides = [node.left, *node.comparators]
    found = []
    if any(isinstance(op, ast.In | ast.NotIn) for op in node.ops):
        for side in sides:
            elements = side.elts if isinstance(side, ast.Tuple | ast.List | ast.Set) else []
            if _codes(_constants(list(elements))) >= 2:
                found.append(f"languages compared {_constants(list(elements))[:4]}")
    if any(isinstance(op, _ORDERING) for op in node.ops):
        of_ord = any("ord(" in ast.unparse(side) for side in sides)
        bounds = [o for side in sides if (o := _ordinal(side, of_ord)) is not None]
        spans = len(bounds) >= 2 and _spans_letters(min(bounds), max(bounds))
        if spans or (len(bounds) == 1 and bounds[0] > 0x7F):
            found.append(f"letters compared {[hex(b) for b in bounds]}")
    return found


def _in_equalities(node: ast.BoolOp) -> list[str]:
    """`language == "zh" or language == "ja"`."""
    equal = [
        c.comparators[0]
        for c in node.values
        if isinstance(c, ast.Compare) and isinstance(c.ops[0], ast.Eq)
    ]
    values = _constants(list(equal))
    return [f"languages compared {values[:4]}"] if _codes(values) >= 2 else []


def _in_a_call(node: ast.Call) -> list[str]:
    """A script read from a character's Unicode name; a `range` of letters beyond ASCII."""
    called = ast.unparse(node.func)
    if called == "unicodedata.name":
        return ["scripts read from Unicode names"]
    bounds = [_ordinal(a, numbers=True) for a in node.args]
    if called == "range" and len(bounds) >= 2 and None not in bounds[:2]:
        low, high = bounds[0], bounds[1]
        if low is not None and high is not None and _spans_letters(low, high - 1):
            return ["letters in a range"]
    return []


def _tables(source: str) -> list[str]:
    """The tables of languages or scripts in a module's source, as `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            tables = _in_a_string(node.value)
        elif isinstance(node, ast.Dict | ast.Set | ast.Tuple | ast.List):
            tables = _in_a_collection(node)
        elif isinstance(node, ast.Compare):
            tables = _in_a_comparison(node)
        elif isinstance(node, ast.BoolOp):
            tables = _in_equalities(node)
        elif isinstance(node, ast.Call):
            tables = _in_a_call(node)
        else:
            continue
        found += [f"{getattr(node, 'lineno', 0)}: {table}" for table in tables]
    return found


def test_languages_and_scripts_are_tabled_only_in_index_text() -> None:
    # Everything the project knows of a language or a script is in one package: its profile
    # (index/text/profile.py). A table elsewhere is a second answer to the same question.
    found = {
        str(path.relative_to(ROOT)): tables
        for name, path in _modules().items()
        if not _in(name, "index.text") and (tables := _tables(path.read_text(encoding="utf-8")))
    }
    assert found == {}


PLANTED = {
    "dict": '_STEM = {"de": "german", "fr": "french", "es": "spanish"}',
    "dict.fromkeys": '_S = {**dict.fromkeys("ru uk bg".split(), "CYRILLIC")}',
    "set": '_PAIRS = {"zh", "ja", "ko"}',
    "frozenset": '_PAIRS = frozenset(("zh", "ja", "ko", "th"))',
    "tuple": 'RTL = ("ar", "fa", "he")',
    "list": 'ORDER = ["en", "de", "fr"]',
    "spaced string": 'WIDE = frozenset("en de fr es".split())',
    "in": 'def f(language):\n    return language in ("el", "he")',
    "or": 'def f(language):\n    return language == "zh" or language == "ja"',
    "script property": '_HAN = regex.compile(r"[\\p{Han}\\p{Hiragana}]")',
    "script=": '_AR = regex.compile(r"\\p{Script=Arabic}+")',
    "scx": '_AR = regex.compile(r"\\p{scx=Arab}")',
    "block": '_CJK = regex.compile(r"\\p{InCJK_Unified_Ideographs}")',
    "escaped range": '_CJK = re.compile("[\\u4e00-\\u9fff]")',
    "raw escaped range": '_CJK = re.compile(r"[\\u4e00-\\u9fff]+")',
    "literal range": '_AR = re.compile("[؀-ۿ]")',
    "comparison": 'def arabic(ch):\n    return "\\u0600" <= ch <= "\\u06ff"',
    "ord comparison": "def han(ch):\n    return 0x4E00 <= ord(ch) <= 0x9FFF",
    "one bound": "def wide(ch):\n    return ord(ch) >= 0x3040",
    "range": "HANGUL = {chr(c) for c in range(0xAC00, 0xD7A4)}",
    "unicode name": 'def cjk(ch):\n    return unicodedata.name(ch).startswith("CJK")',
}
CLEAN = [
    '_WORD = regex.compile(r"[\\p{L}\\p{M}\\p{N}]+")',
    '_SPACE = re.compile(r"[ \\t]+")',
    'QUOTES = "[\\u2018-\\u201f]"',  # punctuation, not letters
    'ENGLISH = "en"\nif language == ENGLISH:\n    pass',
    "def f(x):\n    return 0 <= x <= 10",
    'WORDS = ("the", "of", "and")',
]


@pytest.mark.parametrize("form", list(PLANTED))
def test_the_table_finder_finds_a_planted_table_of_every_form(form: str) -> None:
    assert _tables(PLANTED[form]), PLANTED[form]


@pytest.mark.parametrize("source", CLEAN)
def test_the_table_finder_passes_code_that_holds_no_table(source: str) -> None:
    assert _tables(source) == []


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


def test_the_text_package_is_reached_through_its_face() -> None:
    """Outside index/text, a language's or a script's knowledge comes from `index.text` (its
    Profile and the functions its __init__ names), never from one of its modules: the package
    can move its tables between modules without the rest of the code noticing."""
    import index.text

    face = set(index.text.__all__)
    past = {}
    for name, path in _modules().items():
        if _in(name, "index.text"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                hits = [a.name for a in node.names if a.name.startswith("index.text.")]
            elif isinstance(node, ast.ImportFrom) and node.module:
                if node.module.startswith("index.text."):
                    hits = [node.module]
                elif node.module == "index.text":
                    hits = [f"index.text.{a.name}" for a in node.names if a.name not in face]
                else:
                    hits = []
            else:
                hits = []
            if hits:
                past.setdefault(name, []).extend(hits)
    assert past == {}
