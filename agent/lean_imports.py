"""Keep LangGraph's import from loading the LangGraph Platform client, which gpu-advisor never uses (issue 14).

`langgraph.runtime` needs only `langgraph_sdk.auth.types.BaseUser`, but importing that submodule runs the package's
`__init__`, which imports the HTTP/websocket client and langchain_core's chat-model streaming (~0.1 s CPU on every
cold command). `defer_langgraph_sdk()` registers the package with its real search path and without running
`__init__`: submodules import from disk as usual, and the first read of any other package attribute
(`langgraph_sdk.get_client`, `__version__`...) runs the real `__init__` then, so nothing behaves differently.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from types import ModuleType
from typing import Any

DEFERRED_PACKAGE = "langgraph_sdk"


def defer_langgraph_sdk() -> bool:
    """Register `langgraph_sdk` with its `__init__` deferred; False when it is already imported or not installed."""
    if DEFERRED_PACKAGE in sys.modules:
        return False
    spec = importlib.util.find_spec(DEFERRED_PACKAGE)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return False
    module = importlib.util.module_from_spec(spec)
    lock = threading.Lock()
    state = {"loaded": False}

    def __getattr__(name: str) -> Any:  # noqa: N807 - PEP 562 module attribute hook
        """Run the package's real `__init__` once, then answer from it."""
        with lock:
            if not state["loaded"]:
                state["loaded"] = True
                del module.__dict__["__getattr__"]
                spec.loader.exec_module(module)
        try:
            return module.__dict__[name]
        except KeyError:
            raise AttributeError(f"module {DEFERRED_PACKAGE!r} has no attribute {name!r}") from None

    module.__getattr__ = __getattr__  # type: ignore[method-assign]
    sys.modules[DEFERRED_PACKAGE] = module
    return True


def is_deferred(module: ModuleType) -> bool:
    """Whether `module`'s real `__init__` has not run yet."""
    return "__getattr__" in module.__dict__
