"""`memopt export`: write the prompts of an optimize run or a prompts directory for Mem0, DSPy, or as files."""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["export"]


def export(
    source: str = typer.Argument(..., metavar="SOURCE",
                                 help="An optimize run id (MLflow), or a prompts directory <dir>/<pipeline>/<op>.md."),
    fmt: str = typer.Option(..., "--format", "-f",
                            help="mem0 (Mem0 1.x config fragment), mem0-v2 (Mem0 2.x custom_instructions), "
                                 "dspy (DSPy program JSON) or text (a prompts directory)."),
    out: Path = typer.Option(..., "--out", "-o", help="File to write (a directory for --format text)."),
    pipeline: str = typer.Option(None, "--pipeline", "-p", help="Pipeline to export, when SOURCE holds several."),
    tracking_uri: str = typer.Option(None, "--tracking-uri",
                                     help="MLflow store of the run (default: $MLFLOW_TRACKING_URI, else "
                                          "sqlite:///mlflow.db)."),
    write_prompts: bool = typer.Option(False, "--write-prompts",
                                       help="Also write prompts/<pipeline>/tuned/<op>.md in the repository."),
) -> None:
    """Export tuned prompts, from an optimize run or a prompts directory, for Mem0, DSPy, or as prompt files."""
    from rich.console import Console

    from memopt.errors import ConfigError
    from memopt.export import FORMATS, export, load_source, mem0_fragment, write_tuned_prompts
    from memopt.files import check_writable
    from memopt.prompts import prompt_path

    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    check_writable(out, directory=fmt == "text")
    name, instructions = load_source(source, pipeline=pipeline, tracking_uri=tracking_uri)
    path = export(name, instructions, fmt, out)
    console = Console(soft_wrap=True, highlight=False, markup=False)
    console.print(f"read the {name} prompts ({', '.join(sorted(instructions))}) from {source}; wrote {fmt} → {path}")
    if fmt == "text":
        for op in sorted(instructions):
            console.print(f"  wrote {prompt_path(name, op, path)}")
    if fmt.startswith("mem0"):
        fragment = mem0_fragment(name, instructions, v2=fmt == "mem0-v2")
        for note in (fragment.date_note, *fragment.notes):
            if note:
                console.print(f"note: {note}")
    if write_prompts:
        for written in write_tuned_prompts(name, instructions):
            console.print(f"  wrote {written}")
