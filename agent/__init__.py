"""The conversational side of gpu-advisor.

This package holds the job-spec contract every part reads and writes (`spec.py`), the parsers that turn a chat
message into a `JobSpec`, the LangGraph graph that calls the deterministic tools, the writer that phrases the
result in the user's language, FAQ retrieval, and the `gpu-advisor` command line (`cli.py` plus one module per
command group in `commands/`). No number shown to a user is produced here: numbers come from `tools`.
"""

from agent.lean_imports import defer_langgraph_sdk

defer_langgraph_sdk()  # before anything imports langgraph: skip the unused LangGraph Platform client (issue 14)
