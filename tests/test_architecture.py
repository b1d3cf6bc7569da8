"""The import graph of ``rankstats``: no cycle, and every arrow points down the tiers.

The modules are parsed with :mod:`ast`, never imported, and every import
counts: at module level, inside functions (the lazy imports of optional
dependencies), and ``importlib.import_module`` calls with a literal name.
``docs/architecture.md`` explains the tiers; a new module or subpackage must
be placed in :data:`TIERS` below, and on that page, before this test passes.

That ``import rankstats`` loads no heavy dependency (torch, transformers,
openai, matplotlib, dask) is checked by running it, in ``tests/test_package.py``.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "rankstats"

#: Tier of each top-level module or subpackage of rankstats, lowest first. A module
#: may import modules of its own tier or of lower tiers, never of a higher one.
TIERS = {
    # the errors import nothing, so every tier may raise them, the kernels included
    "errors": -1,
    # pure NumPy/SciPy kernels, one module per job
    "_kernels": 0,
    # the xarray bridge, option checks and text parsers, the version, the schemas
    "_xr": 1,
    "_options": 1,
    "_text": 1,
    "_version": 1,
    "schemas": 1,
    # the statistic decorator, the result classes, the cube: build, check, save, open
    "_statistic": 2,
    "results": 2,
    "cube": 2,
    "validation": 2,
    "io": 2,
    "statistics": 3,
    "stability": 4,
    "analyses": 5,
    "render": 6,
    "plot": 6,
    "reproduce": 7,
    "datasets": 7,
    "testing": 7,
    "cli": 8,
}
#: The package's ``__init__`` re-exports the public names of every tier below the
#: command line: it sits just under ``cli``, and no module below may import it.
FACADE = "rankstats"
FACADE_TIER = 7.5

#: Arrows that break a rule on purpose, as ``(importer, imported): reason``, each
#: module name a prefix. Prefer none.
ALLOWED: dict[tuple[str, str], str] = {}

#: What a kernel may import besides the standard library and other kernels.
KERNEL_IMPORTS = {"numpy", "scipy"}


@dataclass(frozen=True)
class Import:
    """One import statement (or literal ``import_module`` call) of a module."""

    source: str  # the importing module
    target: str  # the imported module, resolved to an existing module where internal
    line: int

    @property
    def where(self) -> str:
        return f"{MODULES[self.source].relative_to(ROOT)}:{self.line}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _absolute(module: str, level: int, name: str | None) -> str:
    """The absolute name of ``from <level dots><name> import ...`` written in ``module``."""
    if not level:
        return name or ""
    base = module.split(".")
    if not _is_package(module):
        base.pop()
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _existing(name: str) -> str:
    """The longest prefix of the dotted ``name`` that is a module of rankstats."""
    parts = name.split(".")
    while parts and ".".join(parts) not in MODULES:
        parts.pop()
    return ".".join(parts)


def _literal_import_module(node: ast.Call, module: str) -> str | None:
    """The module ``importlib.import_module("literal"[, package])`` loads, or None."""
    function = node.func
    called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", "")
    if called != "import_module" or not node.args:
        return None
    first = node.args[0]
    if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
        return None
    name = first.value
    if not name.startswith("."):
        return name
    given = (
        node.args[1]
        if len(node.args) > 1
        else next((keyword.value for keyword in node.keywords if keyword.arg == "package"), None)
    )
    if isinstance(given, ast.Name) and given.id == "__name__":
        package = module
    elif isinstance(given, ast.Name) and given.id == "__package__":
        package = module if _is_package(module) else module.rsplit(".", 1)[0]
    elif isinstance(given, ast.Constant) and isinstance(given.value, str):
        package = given.value
    else:
        return None
    level = len(name) - len(name.lstrip("."))
    parts = package.split(".")
    return ".".join([*parts[: len(parts) - (level - 1)], name.lstrip(".")])


@cache
def imports_of(module: str) -> tuple[Import, ...]:
    """Every import of ``module``, internal ones resolved to the module they load.

    ``from package import name`` loads ``package.name`` when that is a module, and
    the package's ``__init__`` otherwise.
    """
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"), filename=str(MODULES[module]))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(module, alias.name, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node.level, node.module)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                target = full if full in MODULES else base
                found.append(Import(module, target, node.lineno))
        elif isinstance(node, ast.Call):
            name = _literal_import_module(node, module)
            if name:
                found.append(Import(module, name, node.lineno))
    resolved = []
    for item in found:
        if item.target.split(".")[0] == "rankstats":
            item = Import(item.source, _existing(item.target), item.line)
            if item.target == module:
                continue
        resolved.append(item)
    return tuple(dict.fromkeys(resolved))


def internal(module: str) -> list[Import]:
    return [item for item in imports_of(module) if item.target.split(".")[0] == "rankstats"]


def tier(module: str) -> float:
    if module == FACADE:
        return FACADE_TIER
    first = module.split(".")[1]
    if first not in TIERS:
        raise KeyError(first)
    return TIERS[first]


def _allowed(item: Import) -> bool:
    return any(
        (item.source == a or item.source.startswith(a + "."))
        and (item.target == b or item.target.startswith(b + "."))
        for a, b in ALLOWED
    )


def test_the_graph_is_found():
    assert len(MODULES) > 30
    assert "rankstats._kernels.ranking" in MODULES
    edges = {(item.source, item.target) for module in MODULES for item in internal(module)}
    assert ("rankstats.statistics.concordance", "rankstats._statistic") in edges
    # a relative import of a submodule is an arrow to it, not to the package
    assert ("rankstats._statistic", "rankstats._options") in edges
    assert ("rankstats._statistic", "rankstats") not in edges


def test_every_module_has_a_tier():
    unplaced = sorted({name.split(".")[1] for name in MODULES if name != FACADE} - set(TIERS))
    assert not unplaced, (
        f"place {unplaced} in TIERS (tests/test_architecture.py) and in docs/architecture.md"
    )


def test_no_arrow_points_up_the_tiers():
    upward = [
        f"{item.where}: {item.source} (tier {tier(item.source):g}) imports "
        f"{item.target} (tier {tier(item.target):g})"
        for module in MODULES
        for item in internal(module)
        if tier(item.target) > tier(item.source) and not _allowed(item)
    ]
    assert not upward, "imports up the tiers:\n" + "\n".join(upward)


def test_allowed_exceptions_are_still_needed():
    used = {
        (a, b)
        for module in MODULES
        for item in internal(module)
        if tier(item.target) > tier(item.source)
        for a, b in ALLOWED
        if item.source.startswith(a) and item.target.startswith(b)
    }
    assert used == set(ALLOWED), f"drop the unused ALLOWED entries {set(ALLOWED) - used}"


def _cycle() -> list[Import] | None:
    """One cycle of the import graph, as its arrows, or None."""
    graph = {
        module: [item for item in internal(module) if item.target in MODULES] for module in MODULES
    }
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[Import] = []

    def visit(module: str) -> list[Import] | None:
        state[module] = 1
        for item in graph[module]:
            if state.get(item.target) == 1:
                start = next(
                    (i for i, step in enumerate(path) if step.source == item.target), len(path)
                )
                return [*path[start:], item]
            if item.target not in state:
                path.append(item)
                found = visit(item.target)
                if found:
                    return found
                path.pop()
        state[module] = 2
        return None

    for module in MODULES:
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def test_no_import_cycle():
    cycle = _cycle()
    assert cycle is None, "import cycle:\n" + "\n".join(
        f"{item.where}: {item.source} -> {item.target}" for item in cycle
    )


def test_rankstats_never_imports_collectors():
    found = [
        f"{item.where}: {item.target}"
        for module in MODULES
        for item in imports_of(module)
        if item.target.split(".")[0] == "rankstats_collectors"
    ]
    assert not found, "rankstats imports collectors (collectors → rankstats only):\n" + "\n".join(
        found
    )


def test_kernels_are_numpy_only():
    allowed = KERNEL_IMPORTS | set(sys.stdlib_module_names) | {"__future__"}
    found = [
        f"{item.where}: {item.target}"
        for module in MODULES
        if module.startswith("rankstats._kernels")
        for item in imports_of(module)
        if item.target.split(".")[0] not in allowed
        and not item.target.startswith(("rankstats._kernels", "rankstats.errors"))
        and not _allowed(item)
    ]
    assert not found, (
        "a kernel imports beyond NumPy, SciPy and the errors (no xarray):\n" + "\n".join(found)
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from .. import _xr", "rankstats._xr"),
        ("from . import _blocks", "rankstats.statistics._blocks"),
        ("from .._kernels import ranking as r", "rankstats._kernels.ranking"),
        ("from ..errors import CubeError", "rankstats.errors"),
        ("from .. import kendall_w", "rankstats"),
        ("import rankstats.statistics.concordance", "rankstats.statistics.concordance"),
        ("def f():\n    from ..stability import resampling", "rankstats.stability.resampling"),
        ("import importlib\nimportlib.import_module('rankstats.plot')", "rankstats.plot"),
        (
            "from importlib import import_module\nimport_module('.._xr', __package__)",
            "rankstats._xr",
        ),
    ],
)
def test_imports_are_resolved(source, expected, tmp_path, monkeypatch):
    module = "rankstats.statistics._probe"
    path = tmp_path / "_probe.py"
    path.write_text(source + "\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, module, path)
    imports_of.cache_clear()
    try:
        targets = [item.target for item in imports_of(module)]
    finally:
        imports_of.cache_clear()
    assert expected in targets


def test_a_cycle_and_an_upward_arrow_are_caught(tmp_path, monkeypatch):
    probes = {
        "rankstats._kernels._probe_a": "from . import _probe_b\n",
        "rankstats._kernels._probe_b": "from . import _probe_a\nfrom ..cli import main\n",
    }
    for name, source in probes.items():
        path = tmp_path / f"{name.rsplit('.', 1)[1]}.py"
        path.write_text(source, encoding="utf-8")
        monkeypatch.setitem(MODULES, name, path)
    imports_of.cache_clear()
    try:
        cycle = _cycle()
        upward = [
            item
            for item in internal("rankstats._kernels._probe_b")
            if tier(item.target) > tier(item.source)
        ]
    finally:
        imports_of.cache_clear()
    assert cycle is not None
    assert {item.source for item in cycle} == set(probes)
    assert [item.target for item in upward] == ["rankstats.cli"]


BUILTIN_ERRORS = {
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "RuntimeError",
    "LookupError",
    "OSError",
    "FileNotFoundError",
    "NotImplementedError",
}


def test_every_error_raised_on_purpose_is_a_rankstats_error():
    """``raise ValueError(...)`` and friends: use the RankstatsError subclass that is also one."""
    found = []
    for folder in (PACKAGE, ROOT / "rankstats_collectors"):
        for path in sorted(folder.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Raise)
                    and isinstance(node.exc, ast.Call)
                    and isinstance(node.exc.func, ast.Name)
                    and node.exc.func.id in BUILTIN_ERRORS
                ):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.exc.func.id}")
    assert not found, "raise a rankstats.errors class instead:\n" + "\n".join(found)
