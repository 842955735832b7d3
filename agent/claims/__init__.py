"""Claim checking for LLM text: every fact the LLM writes must be one the source (draft or tool results) holds."""

from agent.claims.check import (
    check_fragment,
    check_grounded,
    check_rewording,
    content_problems,
    extract,
    verdict_problems,
)
from agent.claims.support import draft_problems
from agent.claims.support_tools import tool_problems

__all__ = [
    "check_fragment",
    "check_grounded",
    "check_rewording",
    "content_problems",
    "draft_problems",
    "extract",
    "tool_problems",
    "verdict_problems",
]
