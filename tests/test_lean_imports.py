"""The LangGraph Platform client stays unimported on the product path, and stays usable when asked for."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
from agent.lean_imports import defer_heavy_packages
defer_heavy_packages()  # what the entry points do first
import agent.service
heavy = sorted(m for m in sys.modules if m.startswith(("langgraph_sdk.client", "langgraph_sdk._async", "websockets")))
print(heavy)
"""


def _run(code: str) -> str:
    """Run `code` in a fresh interpreter (imports are process-wide) and return its stdout."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_agent_import_leaves_the_platform_client_unloaded() -> None:
    assert _run(CHECK) == "[]"


def test_the_deferred_package_still_answers_every_attribute() -> None:
    code = """
from agent.lean_imports import defer_heavy_packages
defer_heavy_packages()  # what the entry points do first
import agent.service
import langgraph_sdk
from agent.lean_imports import is_deferred
print(is_deferred(langgraph_sdk))
from langgraph_sdk import get_client, Auth
print(callable(get_client), Auth.__name__, langgraph_sdk.__version__ != "", is_deferred(langgraph_sdk))
try:
    langgraph_sdk.no_such_thing
except AttributeError as error:
    print("AttributeError", "no_such_thing" in str(error))
"""
    assert _run(code).splitlines() == ["True", "True Auth True False", "AttributeError True"]


def test_a_graph_turn_runs_with_the_package_deferred(tmp_path) -> None:
    code = f"""
from agent.lean_imports import defer_heavy_packages
defer_heavy_packages()
from agent.service import Advisor
advisor = Advisor(checkpoint_path={str(tmp_path / "threads.sqlite")!r}, db_path={str(tmp_path / "catalog.sqlite")!r})
reply = advisor.respond("QLoRA on Llama 3 8B, 10k examples, budget $50")
top = reply["offers"][0]
print(bool(reply["thread_id"]), reply["spec"]["model"], reply["spec"]["method"],
      reply["answer"].replace("**", "").startswith(f"Rent {{top['total_gpus']}}× {{top['gpu']}} on {{top['provider']}}"))
import sys
print("langgraph_sdk.client" in sys.modules)
advisor.close()
"""
    assert _run(code).splitlines() == ["True llama-3-8b qlora True", "False"]


HELP_CHECK = """
import sys
sys.argv = ["gpu-advisor", "--help"]
from cli.app import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "langgraph", "langchain_core", "openai")
               or m in ("contract.jobspec", "tools.catalog.query", "tools.memory.request"))
sys.stderr.write(repr(heavy))
"""


def test_help_loads_no_models_catalog_or_graph() -> None:
    """`--help` (and shell completion) answer without pydantic, the catalog or LangGraph (issue 14: help <= 0.3 s)."""
    done = subprocess.run([sys.executable, "-c", HELP_CHECK], capture_output=True, text=True, timeout=120, check=True)
    assert "recommend" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "[]"


def test_langsmith_generated_types_load_only_when_asked_for() -> None:
    """LangGraph's import needs one of langsmith's ~180 generated API types; the rest load on first use, intact."""
    code = """
import sys
from agent.lean_imports import defer_heavy_packages
defer_heavy_packages()  # what the entry points do first
import agent.service
loaded = sorted(m for m in sys.modules if m.startswith("langsmith.types."))
print(loaded)
import langsmith.types
from agent.lean_imports import is_deferred
print(is_deferred(langsmith.types))
from langsmith.types import Run, Session
print(Run.__name__, Session.__name__, is_deferred(langsmith.types), len([m for m in sys.modules
                                                                        if m.startswith("langsmith.types.")]) > 100)
"""
    assert _run(code).splitlines() == ["['langsmith.types.run_select_field']", "True", "Run Session False True"]


def test_importing_the_library_changes_nothing_process_wide() -> None:
    """`import agent.service` leaves sys.modules as Python would: the deferral is the entry points' choice."""
    code = """
import sys
import agent.service
import langgraph_sdk
from agent.lean_imports import is_deferred
print(is_deferred(langgraph_sdk), "langgraph_sdk.client" in sys.modules)
"""
    assert _run(code).splitlines() == ["False True"]


def test_the_console_script_defers_before_the_command_runs() -> None:
    """`gpu-advisor` (cli.app.run) registers the deferred packages before any command imports LangGraph."""
    code = """
import atexit, sys
def report():
    from agent.lean_imports import is_deferred
    module = sys.modules.get("langgraph_sdk")
    sys.stderr.write(repr(module is not None and is_deferred(module)))
atexit.register(report)
sys.argv = ["gpu-advisor", "--version"]
from cli.app import run
run()
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr.strip().endswith("True")


def test_the_server_factory_defers_in_every_worker() -> None:
    """The factory `serve` hands uvicorn is imported first in each worker and defers before the web app loads."""
    code = """
import sys
import cli.worker_app
import langgraph_sdk
from agent.lean_imports import is_deferred
print(is_deferred(langgraph_sdk), "web.app" in sys.modules)
"""
    assert _run(code).splitlines() == ["True False"]
