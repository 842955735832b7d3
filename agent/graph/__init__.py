"""The advisor's LangGraph graph: one chat turn from a message to a grounded answer, nodes top to bottom."""

from agent.graph.build import PER_TURN_RESET, build_graph
from agent.graph.inline import inline_bookkeeping
from agent.graph.state import AgentState

__all__ = ["PER_TURN_RESET", "AgentState", "build_graph", "inline_bookkeeping"]
