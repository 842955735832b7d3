"""Which advisor path an eval scores: the offline path unless told otherwise (`--llm`), stated in every report.

Without `--llm` every OPENAI_* variable is removed from the environment before the advisor is built, so a key in the
shell can never turn an offline score into an LLM one silently; with it, the configured LLM is required.
"""

from __future__ import annotations

import argparse
import os

OFFLINE = "offline (OPENAI_* cleared; pass --llm to score the configured LLM)"


def add_llm_flag(parser: argparse.ArgumentParser) -> None:
    """The runners' shared --llm option."""
    parser.add_argument(
        "--llm",
        action="store_true",
        help="score the LLM path configured by OPENAI_* (default: the offline path, OPENAI_* cleared)",
    )


def choose_path(use_llm: bool = False) -> str:
    """Set the environment up for the path to score and return its description for the report."""
    if not use_llm:
        for name in [name for name in os.environ if name.startswith("OPENAI_")]:
            del os.environ[name]
        return OFFLINE
    from agent.llm.client import llm_configured, model_name

    if not llm_configured():
        raise SystemExit(
            "--llm: no LLM configured (set OPENAI_API_KEY and/or OPENAI_BASE_URL, unset GPU_ADVISOR_OFFLINE)"
        )
    return f"LLM ({model_name()} at {os.environ.get('OPENAI_BASE_URL') or 'the OpenAI API'})"
