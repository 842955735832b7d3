"""`openai`, imported on first real use: the offline path (no OPENAI_API_KEY/BASE_URL) never pays its ~0.3-0.9 s import.

`from agent.llm.lazy_openai import openai` stands in for `import openai`. Any attribute access imports the package,
except an exception class looked up while the package has never been imported (an `except (..., openai.OpenAIError)`
clause or an `isinstance(error, openai.APITimeoutError)` test reached on the offline path): no openai exception can
exist before the package is imported, so a private class that nothing raises is returned and the package stays
unloaded. Annotations such as `client: openai.OpenAI` are strings (`from __future__ import annotations`).
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Any


class _NeverRaised(Exception):
    """Matches nothing: stands for an openai exception class while openai has not been imported."""


class _LazyOpenAI:
    """Module proxy: imports openai on first use."""

    def __getattr__(self, name: str) -> Any:
        """The attribute of the real package (imported now), or _NeverRaised for an error class before any use."""
        if "openai" not in sys.modules and name.endswith(("Error", "Exception")):
            return _NeverRaised
        import openai as module

        return getattr(module, name)

    @property
    def loaded(self) -> ModuleType | None:
        """The real package when it has been imported, else None."""
        return sys.modules.get("openai")


openai: Any = _LazyOpenAI()
