"""Package faces that import their modules on first use, for packages whose light parts are needed early (the CLI's
help reads the catalog's sort names and the job defaults without loading the catalog or the memory model)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_face(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: each name in `names` is read from the module it maps to (a module
    of the package, by its last name) the first time it is asked for."""

    def face_getattr(name: str) -> Any:
        """The public name `name`, imported from its module on first use."""
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{names[name]}"), name)

    def face_dir() -> list[str]:
        """The package's public names."""
        return sorted(names)

    return face_getattr, face_dir
