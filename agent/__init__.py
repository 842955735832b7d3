"""The conversational side of gpu-advisor.

The parsers that turn a chat message into a `JobSpec` (the contract lives in `contract/jobspec.py`), the LangGraph
graph that calls the deterministic tools, the writer that phrases the result in the user's language, FAQ answers,
the LLM path (claim checks, tool calls), the `Advisor` service with its thread storage, and exports such as the
SkyPilot task. No number shown to a user is produced here: numbers come from `tools`.
"""

from agent.lean_imports import defer_heavy_packages

defer_heavy_packages()  # before anything imports langgraph: skip package __init__s it does not need (issue 14)
