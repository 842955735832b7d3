"""The `gpu-advisor` command line: a typer app whose command groups live in `cli/commands/`, one module each."""

from __future__ import annotations

import importlib
import sys

import typer

from cli.output import UserError


def command_modules() -> list[str]:
    """Every module in cli/commands/ (each exposes `register(app)`), in name order: a new command is a new file."""
    import pkgutil

    import cli.commands

    return sorted(f"cli.commands.{m.name}" for m in pkgutil.iter_modules(cli.commands.__path__) if not m.ispkg)


def _print_version(value: bool) -> None:
    """Eager --version: print 'gpu-advisor X.Y.Z' and stop."""
    if value:
        from contract.version import installed_version

        sys.stdout.write(f"gpu-advisor {installed_version()}\n")
        raise typer.Exit()


app = typer.Typer(
    name="gpu-advisor",
    help="Which rented GPUs to use for a training or fine-tuning job, why, and what it will cost.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    rich_markup_mode=None,  # plain click help: wraps to the terminal, flag pairs in full, types only on values
)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Which rented GPUs to use for a training or fine-tuning job, why, and what it will cost."""


for _name in command_modules():
    importlib.import_module(_name).register(app)


def _one_line(message: str) -> str:
    """Collapse a message to a single line."""
    return " ".join(str(message).split())


def _exit_code(error: BaseException) -> int | None:
    """The exit code of a typer/click 'Exit' signal (typer vendors click, so match by shape), else None."""
    if type(error).__name__ == "Exit":
        return int(getattr(error, "exit_code", getattr(error, "code", 0)) or 0)
    return None


def _describe(error: BaseException) -> str:
    """One line describing an error for the user."""
    pydantic = sys.modules.get("pydantic")  # not imported for --help; then no error can be its ValidationError
    if pydantic is not None and isinstance(error, pydantic.ValidationError):
        from contract.jobspec import describe_validation_error

        return describe_validation_error(error)
    format_message = getattr(error, "format_message", None)  # click/typer usage errors
    if callable(format_message):
        return str(format_message())
    if isinstance(error, (UserError, ValueError, OSError)):
        return str(error)
    if type(error).__name__ == "Abort" or isinstance(error, KeyboardInterrupt):
        return "aborted"
    return f"internal error ({type(error).__name__}): {error}"


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; every error becomes one line on stderr and exit status 2, never a traceback."""
    try:
        result = app(args=argv, standalone_mode=False)
    except (Exception, KeyboardInterrupt) as error:
        code = _exit_code(error)
        if code is not None:
            return code
        sys.stderr.write(f"error: {_one_line(_describe(error))}\n")
        return 2
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point: process-wide import settings first, then the command."""
    from agent.lean_imports import defer_heavy_packages

    defer_heavy_packages()  # before anything imports langgraph: skip package __init__s it does not need
    sys.exit(main())
