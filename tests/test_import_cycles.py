"""The project's modules import each other without circles (issue 20 point 7: models at the bottom of each app).

Which app may import which is .importlinter's (import-linter's layers contract; tests/test_import_layers.py): a
circle between two apps breaks it first. What import-linter cannot check stays here: module-level circles inside
one app (its ``acyclic_siblings`` contract judges whole subpackages, and surveys' subpackages do lean on each
other, e.g. ``definition`` and ``instruments``, without any module circle), the package ``__init__.py`` files an
import runs, and ``importlib.import_module("…")`` with a constant name.

Every import counts that runs: module-level ones and deferred ones inside functions (a deferred import hides a
circle, it does not remove it). Only imports under `if TYPE_CHECKING:` are left out, since they never run.
Importing `a.b.c` also runs the packages `a` and `a.b` (their `__init__.py`), so those count too, except the
importing module's own packages, which are already loading when it runs.
"""
from __future__ import annotations

import ast
from collections import deque
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "surveys", "elicitation", "analysis", "prolific", "access", "families")


@dataclass(frozen=True)
class Edge:
    """One import: `source` runs `target` (at `line` of the source's file)."""

    source: str
    target: str
    line: int


def project_modules() -> dict[str, Path]:
    """Every project module's dotted name -> its file (a package is its `__init__.py`)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST):
    """Every node of `tree` except those only under `if TYPE_CHECKING:` (their `else:` branch runs)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _imported_names(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement (or `importlib.import_module("…")` with a constant) loads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        return [prefix] + [f"{prefix}.{alias.name}" for alias in node.names if alias.name != "*"]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, (ast.Attribute, ast.Name))
        and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return [node.args[0].value]
    return []


def import_edges(modules: dict[str, Path]) -> list[Edge]:
    """Every runtime import from one project module to another."""
    edges: list[Edge] = []
    for module, path in modules.items():
        is_package = path.name == "__init__.py"
        own_packages = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _runtime_nodes(tree):
            for name in _imported_names(node, module, is_package):
                parts = name.split(".")
                for i in range(1, len(parts) + 1):
                    target = ".".join(parts[:i])
                    if target in modules and target != module and target not in own_packages:
                        edges.append(Edge(module, target, node.lineno))
    return edges


def strongly_connected(nodes: list[str], graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components (iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def shortest_cycle(start: str, members: set[str], by_pair: dict[tuple[str, str], Edge]) -> list[Edge]:
    """The shortest circle of imports from `start` back to it, within one component."""
    previous: dict[str, Edge] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for (source, target), edge in sorted(by_pair.items()):
            if source != node or target not in members:
                continue
            if target == start:
                path = [edge]
                while path[0].source != start:
                    path.insert(0, previous[path[0].source])
                return path
            if target not in previous:
                previous[target] = edge
                queue.append(target)
    return []


def import_cycles() -> list[str]:
    """A description of every import circle (one per strongly connected component), empty when there are none."""
    modules = project_modules()
    edges = import_edges(modules)
    graph: dict[str, set[str]] = {}
    by_pair: dict[tuple[str, str], Edge] = {}
    for edge in edges:
        graph.setdefault(edge.source, set()).add(edge.target)
        by_pair.setdefault((edge.source, edge.target), edge)
    circles = []
    for component in strongly_connected(sorted(modules), graph):
        if len(component) < 2:
            continue
        steps = shortest_cycle(component[0], set(component), by_pair)
        chain = " -> ".join(
            f"{edge.source} ({modules[edge.source].relative_to(ROOT)}:{edge.line})" for edge in steps
        )
        circles.append(f"{len(component)} modules: {', '.join(component)}\n    e.g. {chain} -> {component[0]}")
    return circles


def test_relative_and_deferred_imports_are_read(tmp_path):
    """The parser sees deferred imports and skips TYPE_CHECKING-only ones (else the test below could not fail)."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from surveys.models import Study\n"
        "def f():\n    from . import flow\n    import importlib\n    importlib.import_module('surveys.views')\n"
    )
    names = [
        name
        for node in _runtime_nodes(ast.parse(source))
        for name in _imported_names(node, "surveys.withdrawal", is_package=False)
    ]
    assert "surveys.models" not in names
    assert "surveys.flow" in names and "surveys.views" in names
    assert strongly_connected(["a", "b", "c"], {"a": {"b"}, "b": {"a", "c"}}) == [["c"], ["a", "b"]]


def test_no_import_cycles():
    circles = import_cycles()
    assert not circles, f"{len(circles)} import circle(s) between project modules:\n" + "\n".join(circles)
