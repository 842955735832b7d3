"""Layers point one way: contract <- tools <- kb <- agent <- web <- cli (each may import only what is to its left)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN: dict[str, set[str]] = {
    "contract": {"tools", "kb", "agent", "web", "cli", "prompts", "evals"},
    "tools": {"kb", "agent", "web", "cli", "evals"},
    "kb": {"agent", "web", "cli", "evals"},
    "agent": {"web", "cli", "evals"},
    "web": {"cli", "evals"},
}


def imported_packages(path: Path) -> set[str]:
    """Top-level package names a module imports (at module level or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_nothing_above_it(layer: str) -> None:
    """No module of a layer imports a package of a layer above it."""
    files = sorted((ROOT / layer).rglob("*.py"))
    assert files, f"layer {layer} has no modules"
    bad = [
        f"{f.relative_to(ROOT)} imports {name}"
        for f in files
        for name in sorted(imported_packages(f) & FORBIDDEN[layer])
    ]
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The scan finds imports inside functions too (a lazy import is still a dependency)."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from agent.graph.build import build\n    import web.app\n")
    assert imported_packages(module) == {"agent", "web"}


def test_python_modules_stay_small() -> None:
    """No Python module in the product packages is over 400 lines."""
    big = [
        f"{f.relative_to(ROOT)}: {n}"
        for layer in [*FORBIDDEN, "cli", "evals"]
        for f in sorted((ROOT / layer).rglob("*.py"))
        if (n := len(f.read_text(encoding="utf-8").splitlines())) > 400
    ]
    assert not big, "\n".join(big)


PRODUCT = ["contract", "tools", "kb", "agent", "web", "cli", "prompts"]
MAX_MODULES_PER_FOLDER = 15


def product_modules() -> dict[str, Path]:
    """Every product module by dotted name (a package by its own name, for its `__init__.py`)."""
    found: dict[str, Path] = {}
    for layer in PRODUCT:
        for path in sorted((ROOT / layer).rglob("*.py")):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """Our modules a module imports (lazy imports too); `from P import m` counts as importing the module P.m."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
            subs = {f"{node.module}.{alias.name}" for alias in node.names} & modules.keys()
            found.update(subs)
            if len(subs) < len(node.names):
                found.add(node.module)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports."""
    modules = product_modules()
    return {name: imports_of(path, modules) - {name} for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_import_circles() -> None:
    """No two modules import each other, directly or round a loop (lazy imports count)."""
    found = circles(import_graph())
    assert not found, "\n".join(" <-> ".join(group) for group in found)


def test_the_circle_finder_sees_a_loop() -> None:
    """A loop of three and a pair are found; a chain is not a loop."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(circles(graph)) == [["a", "b", "c"], ["d", "e"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def package_of(module: str, modules: dict[str, Path]) -> str | None:
    """The sub-package a module belongs to (a folder below a layer), or None for a layer's own modules."""
    parent = module.rpartition(".")[0]
    return parent if parent.count(".") >= 1 and parent in modules else None


def private_reaches(graph: dict[str, set[str]], modules: dict[str, Path]) -> list[str]:
    """Imports of a sub-package's inner module from outside it (outside code uses its `__init__`); a package nested in
    another is also open to the package holding it."""
    bad = []
    for importer, imported in graph.items():
        for target in sorted(imported):
            package = package_of(target, modules)
            owner = package.rpartition(".")[0] if package and package.count(".") >= 2 else package
            if package and owner and not (importer == owner or importer.startswith(owner + ".")):
                bad.append(f"{importer} imports {target} (use {package})")
    return bad


def test_outside_code_uses_a_package_through_its_face() -> None:
    """A sub-package's modules are its own: code outside it imports what the package's `__init__` exports."""
    modules = product_modules()
    bad = private_reaches(import_graph(), modules)
    assert not bad, "\n".join(bad)


def test_the_face_check_sees_a_private_reach() -> None:
    """Reaching into another package is caught; a sibling import and the layer's own modules are not."""
    names = [
        "tools",
        "tools.catalog",
        "tools.catalog.db",
        "tools.catalog.io",
        "tools.catalog.io.csv",
        "tools.gpus",
        "tools.ranking",
        "tools.ranking.rank",
        "agent",
        "agent.x",
    ]
    modules = dict.fromkeys(names, ROOT)
    graph = {
        "agent.x": {"tools.catalog.db", "tools.gpus", "tools.catalog"},
        "tools.catalog": {"tools.catalog.db"},
        "tools.catalog.db": {"tools.catalog.io.csv"},
        "tools.ranking.rank": {"tools.catalog.io.csv"},
    }
    assert private_reaches(graph, modules) == [
        "agent.x imports tools.catalog.db (use tools.catalog)",
        "tools.ranking.rank imports tools.catalog.io.csv (use tools.catalog.io)",
    ]


def test_folders_stay_small() -> None:
    """No product folder holds more than ~15 modules: a bigger one is a package waiting to be named."""
    big = [
        f"{folder.relative_to(ROOT)}: {n}"
        for layer in PRODUCT
        for folder in [ROOT / layer, *sorted(p for p in (ROOT / layer).rglob("*") if p.is_dir())]
        if (n := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    ]
    assert not big, "\n".join(big)
