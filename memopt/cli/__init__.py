"""The `memopt` command line: the main group only registers commands, one module per command.

Command modules import only typer at module level; heavy libraries (DSPy, MLflow, LiteLLM) are
imported inside the commands that need them, so `memopt --help` stays fast. Errors a user can fix
(`MemoptError`) are printed as one message, with exit code 2. Ctrl-C and SIGTERM end any command
the same way: one "interrupted" line, exit code 130 (SIGINT) or 143 (SIGTERM), see `memopt.core.interrupts`.
"""

from __future__ import annotations

import os
import sys

import typer

from memopt.core.errors import MemoptError

__all__ = ["app", "main"]

PIPED_COLUMNS = 160  # table width when the output is not a terminal (unless $COLUMNS says otherwise)

app = typer.Typer(
    name="memopt",
    help="Find why an LLM memory system answered wrong, and fix the prompt that caused it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _register() -> None:
    from memopt.cli import (
        attach,
        attribute,
        bench,
        check_prompts,
        data,
        directives,
        export,
        label,
        lm_check,
        mem0,
        optimize,
        plugins,
        report,
        run,
        serve,
        show,
        worker,
    )
    from memopt.cli import systems as systems_command

    app.command("optimize")(optimize.optimize)
    app.command("worker")(worker.worker)
    app.command("run")(run.run)
    app.command("attribute")(attribute.attribute)
    app.command("report")(report.report)
    app.command("label")(label.label)
    app.add_typer(data.app, name="data")
    app.add_typer(bench.app, name="bench")
    app.command("serve")(serve.serve)
    app.command("lm-check")(lm_check.lm_check)
    app.command("directives")(directives.directives)
    app.command("systems")(systems_command.systems)
    app.command("plugins")(plugins.plugins)
    app.command("show")(show.show)
    app.command("export")(export.export)
    app.command("check-prompts")(check_prompts.check_prompts)
    app.add_typer(mem0.app, name="mem0")
    app.add_typer(attach.app, name="attach")


_register()


def _interrupted(exc: BaseException) -> bool:
    """Whether ``exc`` is, or was caused by, a `KeyboardInterrupt` (typer turns one into exit code 130)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def _run_app() -> int:
    """Run the app; a bad option or argument is ONE line (``error: Invalid value for '--rounds': ...; see `memopt
    optimize -h```, exit 2), not a usage box. A Ctrl-C or SIGTERM is raised as `KeyboardInterrupt` (Typer would
    turn it into a bare exit 130); the exit code of the command otherwise."""
    import typer
    from rich.console import Console
    from rich.markup import escape

    from memopt.lm.redaction import redact

    try:
        code = app(standalone_mode=False)
    except typer.Abort as e:  # end of input where a command asked for some
        if _interrupted(e):
            raise KeyboardInterrupt from e
        sys.stderr.write("error: aborted (no input).\n")
        return 1
    except typer.TyperException as e:  # Typer's (click's) usage errors: a bad option, a missing argument
        if type(e).__name__ == "NoArgsIsHelpError":
            e.show()  # type: ignore[attr-defined]  # the command's help, as a bare `memopt attach` asks for
            return int(getattr(e, "exit_code", 2))
        ctx = getattr(e, "ctx", None)
        where = ctx.command_path if ctx is not None else "memopt"
        message = (e.format_message() if hasattr(e, "format_message") else str(e)).rstrip(".")
        Console(stderr=True, soft_wrap=True).print(
            f"[bold red]error:[/] {escape(redact(message))}; see `{escape(where)} -h`.", highlight=False)
        return int(getattr(e, "exit_code", 2))
    if code == 130:  # Typer's exit for a KeyboardInterrupt (Ctrl-C, or SIGTERM by `memopt.core.interrupts`)
        raise KeyboardInterrupt
    return code if isinstance(code, int) else 0


def main() -> None:
    """Entry point of the `memopt` console script."""
    from memopt.core import interrupts
    from memopt.lm.redaction import mask_process_output

    interrupts.handle_sigterm()
    mask_process_output()  # logs, warnings and tracebacks pass through the one masking rule
    if not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        os.environ["COLUMNS"] = str(PIPED_COLUMNS)  # rich's 80 columns would fold the tables of a log or a pipe
    try:
        code = _run_app()
    except MemoptError as e:
        from rich.console import Console
        from rich.markup import escape

        from memopt.lm.redaction import redact

        Console(stderr=True, soft_wrap=True).print(f"[bold red]error:[/] {escape(redact(str(e)))}", highlight=False)
        sys.exit(e.exit_code)
    except (KeyboardInterrupt, SystemExit) as e:
        if not _interrupted(e):
            raise
        sys.stderr.write(f"interrupted ({interrupts.interrupted_by()}); nothing half-written is kept\n")
        sys.exit(interrupts.exit_code())
    sys.exit(code)
