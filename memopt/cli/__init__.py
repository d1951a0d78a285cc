"""The `memopt` command line: the main group only registers commands, one module per command.

Command modules import only typer at module level; heavy libraries (DSPy, MLflow, LiteLLM) are
imported inside the commands that need them, so `memopt --help` stays fast. Errors a user can fix
(`MemoptError`) are printed as one message, with exit code 2.
"""

from __future__ import annotations

import sys

import typer

from memopt.errors import MemoptError

__all__ = ["app", "main"]

app = typer.Typer(
    name="memopt",
    help="Find why an LLM memory system answered wrong, and fix the prompt that caused it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register() -> None:
    from memopt.cli import attribute, bench, data, directives, export, lm_check, mem0, optimize, run, serve, show
    from memopt.cli import systems as systems_command

    app.command("optimize")(optimize.optimize)
    app.command("run")(run.run)
    app.command("attribute")(attribute.attribute)
    app.add_typer(data.app, name="data")
    app.add_typer(bench.app, name="bench")
    app.command("serve")(serve.serve)
    app.command("lm-check")(lm_check.lm_check)
    app.command("directives")(directives.directives)
    app.command("systems")(systems_command.systems)
    app.command("show")(show.show)
    app.command("export")(export.export)
    app.add_typer(mem0.app, name="mem0")


_register()


def main() -> None:
    """Entry point of the `memopt` console script."""
    try:
        app()
    except MemoptError as e:
        from rich.console import Console
        from rich.markup import escape

        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(str(e))}", highlight=False)
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
