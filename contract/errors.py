"""The one error type for mistakes in the user's input, shared by every layer."""

from __future__ import annotations


class UserError(Exception):
    """An error caused by the user's input; front ends show its message on one line (CLI: exit status 2)."""
