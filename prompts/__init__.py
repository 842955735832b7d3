"""LLM prompts and per-language answer templates, kept as files next to this module, with a loader.

Language-neutral prompts are files here (`<name>.<ext>`); everything written in one language lives in that
language's folder `<code>/` (templates, FAQ texts, Slack strings, and the word lists the parser and claim checker
read in `<code>/words/`). The languages themselves are registered once, in `contract/languages.py`. Code never
embeds these texts.
"""

from importlib import resources

from contract.languages import supported_or_default


def load(name: str) -> str:
    """Return the text of the language-neutral prompt file `name` shipped in this package."""
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def load_in(language: str, name: str) -> str:
    """Return the text of file `name` in `language`'s folder (the default language's for an unsupported one)."""
    return resources.files(__package__).joinpath(supported_or_default(language), name).read_text(encoding="utf-8")
