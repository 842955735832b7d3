"""The `gpu-advisor` command line: a typer app whose command groups live in `agent/commands/`."""

from __future__ import annotations

import importlib
import json
import sys

import click
import typer
from pydantic import ValidationError

from agent.output import UserError
from agent.spec import describe_validation_error

COMMAND_MODULES: list[str] = [
    "agent.commands.catalog",
]

app = typer.Typer(
    name="gpu-advisor",
    help="Which rented GPUs to use for a training or fine-tuning job, why, and what it will cost.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


def _one_line(message: str) -> str:
    """Collapse a message to a single line."""
    return " ".join(str(message).split())


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every error becomes one line on stderr and exit status 2, never a traceback."""
    try:
        result = app(args=argv, standalone_mode=False)
    except click.exceptions.Exit as done:
        return done.exit_code
    except click.exceptions.Abort:
        sys.stderr.write("error: aborted\n")
        return 2
    except click.ClickException as error:
        sys.stderr.write(f"error: {_one_line(error.format_message())}\n")
        return 2
    except ValidationError as error:
        sys.stderr.write(f"error: {_one_line(describe_validation_error(error))}\n")
        return 2
    except (UserError, ValueError, OSError, json.JSONDecodeError) as error:
        sys.stderr.write(f"error: {_one_line(str(error))}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 2
    except Exception as error:  # noqa: BLE001 - the CLI promises never to show a traceback
        sys.stderr.write(f"error: internal error ({type(error).__name__}): {_one_line(str(error))}\n")
        return 2
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
