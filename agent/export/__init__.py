"""The recommendation as a SkyPilot task: resources, nodes, spot recovery and a run skeleton, commented in the
user's language. Built from one turn's result (what `recommend --json` prints); every value comes from it.
"""

from agent.export.skypilot import ExportError, build_task, exported_offer

__all__ = ["ExportError", "build_task", "exported_offer"]
