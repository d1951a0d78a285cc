"""`memopt export`: write the prompts of an optimize run or a prompts directory for Mem0, DSPy, or as files."""

from __future__ import annotations

from pathlib import Path

import typer

from memopt.cli.check_prompts import DATA_HELP, SEED_HELP

__all__ = ["export"]


def export(
    source: str = typer.Argument(..., metavar="SOURCE",
                                 help="An optimize run id (MLflow), or a prompts directory <dir>/<pipeline>/<op>.md."),
    fmt: str = typer.Option(..., "--format", "-f",
                            help="mem0 (Mem0 1.x config fragment), mem0-v2 (Mem0 2.x custom_instructions), "
                                 "dspy (a DSPy program: a directory for dspy.load, or a state file *.json) or "
                                 "text (a prompts directory)."),
    out: Path = typer.Option(..., "--out", "-o", help="File to write (a directory for --format text, and for "
                                                      "--format dspy unless it ends in .json)."),
    pipeline: str = typer.Option(None, "--pipeline", "-p", help="Pipeline to export, when SOURCE holds several."),
    tracking_uri: str = typer.Option(None, "--tracking-uri",
                                     help="MLflow store of the run (default: $MLFLOW_TRACKING_URI, else "
                                          "sqlite:///mlflow.db)."),
    write_prompts: bool = typer.Option(False, "--write-prompts",
                                       help="Also write prompts/<pipeline>/tuned/<op>.md in the repository."),
    data: str = typer.Option(None, "--data", help=DATA_HELP),
    seed: str = typer.Option(None, "--seed-prompts", help=SEED_HELP),
    force: bool = typer.Option(False, "--force",
                               help="Export even when the prompt check finds injection, a contradiction or leaked "
                                    "training data (never a secret)."),
) -> None:
    """Export tuned prompts and the knobs they were tuned with, from an optimize run or a prompts directory, for Mem0,
    DSPy, or as prompt files; the prompt check runs first."""
    from rich.console import Console

    from memopt.core.errors import ConfigError, PromptCheckFailed
    from memopt.core.files import check_writable
    from memopt.export.formats import FORMATS, dspy_load_line, export, mem0_fragment, write_tuned_prompts
    from memopt.systems.prompts import prompt_path
    from memopt.tracking.sources import check_source, load_knobs

    if fmt not in FORMATS:
        raise ConfigError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    check_writable(out, directory=fmt == "text" or (fmt == "dspy" and out.suffix != ".json"))
    name, instructions, report = check_source(source, pipeline=pipeline, data=data, seed_dir=seed,
                                              tracking_uri=tracking_uri)
    console = Console(soft_wrap=True, highlight=False, markup=False)
    console.print(report.text())
    secrets = [i for i in report.blocking if i.kind == "secret"]
    if secrets:  # a key exported is a key leaked: --force does not ship it
        raise PromptCheckFailed(f"{source}: {len(secrets)} prompt(s) hold a secret (above); remove it from the "
                                "prompts: a secret is never exported, --force or not.")
    if report.blocking and not force:
        raise PromptCheckFailed(f"the prompt check found {len(report.blocking)} blocking issue(s) in {source} (above): "
                          "fix the prompts, or pass --force to export them anyway.")
    knobs = load_knobs(source, name, tracking_uri=tracking_uri)
    path = export(name, instructions, fmt, out, knobs)
    console.print(f"read the {name} prompts ({', '.join(sorted(instructions))}) from {source}; wrote {fmt} → {path}")
    console.print(f"knobs ({knobs.source}{', run ' + knobs.run_id if knobs.run_id else ''}): "
                  + ", ".join(f"{k}={v}" for k, v in sorted(knobs.values.items())))
    if fmt == "text":
        for op in sorted(instructions):
            console.print(f"  wrote {prompt_path(name, op, path)}")
    if fmt == "dspy":
        console.print(f"load it: {dspy_load_line(name, path, knobs)}")
    if fmt.startswith("mem0"):
        fragment = mem0_fragment(name, instructions, v2=fmt == "mem0-v2")
        for note in (fragment.date_note, *fragment.notes):
            if note:
                console.print(f"note: {note}")
    if write_prompts:
        for written in write_tuned_prompts(name, instructions):
            console.print(f"  wrote {written}")
