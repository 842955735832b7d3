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
    bad = [f"{f.relative_to(ROOT)} imports {name}" for f in files
           for name in sorted(imported_packages(f) & FORBIDDEN[layer])]
    assert not bad, "\n".join(bad)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The scan finds imports inside functions too (a lazy import is still a dependency)."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from agent.graph import build\n    import web.app\n")
    assert imported_packages(module) == {"agent", "web"}


def test_python_modules_stay_small() -> None:
    """No Python module in the product packages is over 400 lines."""
    big = [f"{f.relative_to(ROOT)}: {n}" for layer in [*FORBIDDEN, "cli", "evals"]
           for f in sorted((ROOT / layer).rglob("*.py"))
           if (n := len(f.read_text(encoding="utf-8").splitlines())) > 400]
    assert not big, "\n".join(big)
