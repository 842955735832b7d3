"""The Slack surface: a Bolt app (mentions, DMs, thread follow-ups, the `/gpu` command and the re-run buttons) that
turns the advisor's result into Block Kit, keeps Slack threads mapped to agent threads in SQLite, and runs either as
HTTP events mounted on the FastAPI server (`mount`) or over Socket Mode (`gpu-advisor slack --socket`).
It adds transport and rendering only; every number comes from the advisor and the tools.
"""

from web.slack.events_route import EVENTS_PATH, mount, slack_configured
from web.slack.settings import load_settings
from web.slack.socket_mode import socket_mode_handler

__all__ = ["EVENTS_PATH", "load_settings", "mount", "slack_configured", "socket_mode_handler"]
