"""The import architecture, read from the source: dependencies point one way.

Entry points (schema/, resolvers/, actors/, cli/, app) -> services/ -> storage (graphdb/) -> Cypher (cypher/),
with the domain (domain/), the checks (checks/), the analytics (analytics/) and the exports (exports/) pure:
no storage, no driver, no web, no actors; entry points reach those three through services/ alone.

Every ``.py`` file under src/decisiontrail is parsed with ``ast``; every ``import`` and ``from ... import``
counts, at module level, inside functions and under ``if TYPE_CHECKING:`` alike. Nothing here imports
decisiontrail, so the checks run without Neo4j.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGE = SRC / "decisiontrail"

ENTRY_POINTS = (
    "decisiontrail.schema",
    "decisiontrail.resolvers",
    "decisiontrail.actors",
    "decisiontrail.cli",
    "decisiontrail.app",
    "decisiontrail.web",
    "decisiontrail.api",
    "decisiontrail.mcp_server",
)
STORAGE = ("decisiontrail.graphdb", "decisiontrail.cypher")
PURE_GRAPH_ROOMS = ("decisiontrail.checks", "decisiontrail.analytics", "decisiontrail.exports")
"""The networkx rooms: pure functions of a loaded decision graph, which services load and hand them."""
IO_PACKAGES = ("neo4j", "strawberry", "starlette", "langgraph", "langchain_core", "httpx", "uvicorn")
MAX_STORAGE_LINES = 400
MAX_MODULE_LINES = 600


@dataclass(frozen=True, order=True)
class Import:
    """One module imported by one statement: ``names`` are what a ``from`` import takes from it."""

    file: str
    line: int
    importer: str
    imported: str
    names: tuple[str, ...]
    in_function: bool

    def __str__(self) -> str:
        shown = [*self.names[:4], f"+{len(self.names) - 4} more"] if len(self.names) > 4 else list(self.names)
        taken = f" ({', '.join(shown)})" if shown else ""
        where = f"{self.file}:{self.line}" + (", inside a function" if self.in_function else "")
        return f"{self.importer} imports {self.imported}{taken}  [{where}]"


def module_name(path: Path) -> str:
    """The dotted name of a source file: src/decisiontrail/foo/__init__.py -> decisiontrail.foo."""
    parts = path.resolve().relative_to(SRC.resolve()).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_source_module(name: str) -> bool:
    """Whether a dotted name is a module or package of the source tree."""
    base = SRC.joinpath(*name.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def within(name: str, roots: Iterable[str]) -> bool:
    """Whether a dotted name is one of the roots or inside one of them."""
    return any(name == root or name.startswith(root + ".") for root in roots)


def from_targets(node: ast.ImportFrom, module: str, is_package: bool) -> dict[str, list[str]]:
    """The modules a ``from ... import`` reads (relative imports resolved), each with the names it takes from them."""
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, node.module] if node.module else parts)
    targets: dict[str, list[str]] = {}
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        targets.setdefault(submodule if is_source_module(submodule) else base, []).append(alias.name)
    return targets


def collect_imports(source: str, path: Path) -> list[Import]:
    """Every module the source imports, wherever the statement stands; ``from pkg import sub`` names pkg.sub."""
    module = module_name(path)
    file = str(path.relative_to(ROOT))
    tree = ast.parse(source, filename=file)
    in_function = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        for inner in ast.walk(node)
    }
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets: dict[str, list[str]] = {alias.name: [] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            targets = from_targets(node, module, path.name == "__init__.py")
        else:
            continue
        found += [
            Import(file, node.lineno, module, target, tuple(names), id(node) in in_function) for target, names in targets.items()
        ]
    return sorted(found)


@functools.cache
def source_files() -> tuple[Path, ...]:
    return tuple(sorted(PACKAGE.rglob("*.py")))


@functools.cache
def all_imports() -> tuple[Import, ...]:
    return tuple(imp for path in source_files() for imp in collect_imports(path.read_text(encoding="utf-8"), path))


def imports_from(importers: Iterable[str]) -> list[Import]:
    roots = tuple(importers)
    return [imp for imp in all_imports() if within(imp.importer, roots)]


def fail_if_any(offenders: Iterable[object], headline: str) -> None:
    lines = [str(offender) for offender in offenders]
    if lines:
        pytest.fail("\n".join([f"{headline} ({len(lines)}):", *(f"  {line}" for line in lines)]), pytrace=False)


def package_of(module: str) -> str:
    """decisiontrail.graphdb.x -> graphdb, decisiontrail.cli -> cli, decisiontrail itself -> decisiontrail."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def shortest_cycle(graph: nx.DiGraph[str]) -> list[str]:
    """A shortest cycle of the graph as its nodes in order, or [] when it has none."""
    for bound in range(1, graph.number_of_nodes() + 1):
        for cycle in nx.simple_cycles(graph, length_bound=bound):
            return list(cycle)
    return []


def test_the_import_collector_sees_every_kind_of_import() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import neo4j.exceptions\n"
        "def wire() -> None:\n"
        "    from decisiontrail.graphdb import X, Y\n"
        "    from . import graphdb\n"
        "    from .graphdb.connection import open_graph\n"
    )
    found = {
        (imp.line, imp.importer, imp.imported, imp.names, imp.in_function) for imp in collect_imports(source, PACKAGE / "cli.py")
    }

    assert found == {
        (1, "decisiontrail.cli", "typing", ("TYPE_CHECKING",), False),
        (3, "decisiontrail.cli", "neo4j.exceptions", (), False),
        (5, "decisiontrail.cli", "decisiontrail.graphdb", ("X", "Y"), True),
        (6, "decisiontrail.cli", "decisiontrail.graphdb", ("graphdb",), True),
        (7, "decisiontrail.cli", "decisiontrail.graphdb.connection", ("open_graph",), True),
    }
    assert module_name(PACKAGE / "foo" / "__init__.py") == "decisiontrail.foo"
    assert module_name(PACKAGE / "__init__.py") == "decisiontrail"
    modules = {module_name(path) for path in source_files()}
    assert len(modules) > 50, f"the walk over {PACKAGE} found only {len(modules)} modules"
    assert any(imp.imported.startswith("decisiontrail.") for imp in all_imports())


def test_entry_points_reach_storage_only_through_services() -> None:
    fail_if_any(
        (imp for imp in imports_from(ENTRY_POINTS) if within(imp.imported, ["decisiontrail.graphdb"])),
        "entry points import storage (decisiontrail.graphdb) instead of going through decisiontrail.services",
    )


def test_entry_points_never_import_checks_exports_or_analytics_directly() -> None:
    fail_if_any(
        (imp for imp in imports_from(ENTRY_POINTS) if within(imp.imported, PURE_GRAPH_ROOMS)),
        "entry points import decisiontrail.checks, decisiontrail.exports or decisiontrail.analytics instead of going "
        "through decisiontrail.services",
    )


def test_storage_knows_no_rules_events_or_callers() -> None:
    callers = ("decisiontrail.events", "decisiontrail.access", "decisiontrail.services", *ENTRY_POINTS)
    fail_if_any(
        (imp for imp in imports_from(STORAGE) if within(imp.imported, callers)),
        "storage (graphdb, cypher) imports events, access rules, services or entry points",
    )


def test_storage_modules_are_small() -> None:
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in source_files()}
    fail_if_any(
        (
            f"{path.relative_to(ROOT)}: {lines} lines"
            for path, lines in sizes.items()
            if path.is_relative_to(PACKAGE / "graphdb") and lines > MAX_STORAGE_LINES
        ),
        f"storage modules longer than {MAX_STORAGE_LINES} lines",
    )


def test_no_module_is_longer_than_600_lines() -> None:
    """A module past 600 lines holds more than one room's worth: split it by what it holds."""
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in source_files()}
    fail_if_any(
        (f"{path.relative_to(ROOT)}: {lines} lines" for path, lines in sorted(sizes.items()) if lines > MAX_MODULE_LINES),
        f"modules longer than {MAX_MODULE_LINES} lines",
    )


@pytest.mark.parametrize(
    ("room", "allowed"),
    [
        ("decisiontrail.domain", ("decisiontrail.domain", "decisiontrail.exceptions")),
        ("decisiontrail.checks", ("decisiontrail.checks", "decisiontrail.domain", "decisiontrail.exceptions")),
        (
            "decisiontrail.analytics",
            ("decisiontrail.analytics", "decisiontrail.checks", "decisiontrail.domain", "decisiontrail.exceptions"),
        ),
        (
            "decisiontrail.exports",
            (
                "decisiontrail.exports",
                "decisiontrail.analytics",
                "decisiontrail.checks",
                "decisiontrail.domain",
                "decisiontrail.exceptions",
            ),
        ),
    ],
)
def test_pure_rooms_import_no_io(room: str, allowed: tuple[str, ...]) -> None:
    fail_if_any(
        (
            imp
            for imp in imports_from([room])
            if within(imp.imported, IO_PACKAGES)
            or (within(imp.imported, ["decisiontrail"]) and not within(imp.imported, allowed))
        ),
        f"{room} imports I/O or decisiontrail beyond {', '.join(allowed)}",
    )


def test_services_do_not_import_entry_points() -> None:
    fail_if_any(
        (
            imp
            for imp in imports_from(["decisiontrail.services"])
            if within(imp.imported, (*ENTRY_POINTS, "strawberry", "starlette"))
        ),
        "services import entry points or the web framework",
    )


def test_no_import_cycles_between_packages() -> None:
    witness: dict[tuple[str, str], Import] = {}  # per edge, its first import, one at module level when there is one
    for imp in sorted(all_imports(), key=lambda imp: imp.in_function):
        if within(imp.imported, ["decisiontrail"]) and package_of(imp.importer) != package_of(imp.imported):
            witness.setdefault((package_of(imp.importer), package_of(imp.imported)), imp)
    cycle = shortest_cycle(nx.DiGraph(list(witness)))
    edges = list(zip(cycle, [*cycle[1:], *cycle[:1]], strict=True))
    fail_if_any(
        (f"{a} -> {b}: {witness[a, b]}" for a, b in edges),
        f"the packages import each other in a cycle {' -> '.join([*cycle, *cycle[:1]])}",
    )
