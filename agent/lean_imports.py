"""Keep LangGraph's import from running package `__init__`s that import far more than gpu-advisor uses (issue 14).

- `langgraph_sdk`: `langgraph.runtime` needs only `langgraph_sdk.auth.types.BaseUser`, but the package's `__init__`
  imports the HTTP/websocket client and langchain_core's chat-model streaming (~0.1 s CPU on every cold command).
- `langsmith.types`: langsmith's run trees need only `langsmith.types.run_select_field`, but the package's
  `__init__` imports all ~180 generated API types, each a pydantic model (~0.15 s CPU).

`defer_package_init(name)` registers the package with its real search path and without running `__init__`:
submodules import from disk as usual, and the first read of any other package attribute (`langgraph_sdk.get_client`,
`langsmith.types.Run`, `__version__`...) runs the real `__init__` then, so nothing behaves differently.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

DEFERRED_PACKAGES = ("langgraph_sdk", "langsmith.types")
"""Packages whose `__init__` waits until something reads an attribute it defines."""


def defer_package_init(name: str) -> bool:
    """Register package `name` with its `__init__` deferred; False when it is already imported or not installed."""
    if name in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(name)
    except ImportError:  # its parent package is missing
        return False
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    lock = threading.Lock()
    state = {"loaded": False}

    def __getattr__(attribute: str) -> Any:
        """Run the package's real `__init__` once, then answer from it."""
        with lock:
            if not state["loaded"]:
                state["loaded"] = True
                del module.__dict__["__getattr__"]
                spec.loader.exec_module(module)
        try:
            return module.__dict__[attribute]
        except KeyError:
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return True


def defer_heavy_packages() -> list[str]:
    """Defer every package in DEFERRED_PACKAGES that is installed and not imported yet; returns those deferred."""
    return [name for name in DEFERRED_PACKAGES if defer_package_init(name)]


def is_deferred(module: ModuleType) -> bool:
    """Whether `module`'s real `__init__` has not run yet."""
    return "__getattr__" in module.__dict__
