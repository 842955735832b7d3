"""The conversational side of gpu-advisor.

The parsers that turn a chat message into a `JobSpec` (the contract lives in `contract/jobspec.py`), the LangGraph
graph that calls the deterministic tools, the writer that phrases the result in the user's language, FAQ answers,
the LLM path (claim checks, tool calls), the `Advisor` service with its thread storage, and exports such as the
SkyPilot task. No number shown to a user is produced here: numbers come from `tools`.

Importing it changes nothing process-wide: the entry points (`cli.app.run`, `serve`'s worker factory) defer heavy
package `__init__`s (`agent.lean_imports`) and tune the garbage collector for long-running advisors
(`agent.gc_tuning.for_long_running`).
"""
