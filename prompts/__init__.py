"""LLM prompts and per-language answer templates, kept as files next to this module, with a loader.

Templates and prompts are text files named `<name>.<lang>.<ext>` or `<name>.<ext>`; code never embeds them.
"""

from importlib import resources


def load(name: str) -> str:
    """Return the text of the prompt or template file `name` shipped in this package."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
