"""`memopt check-prompts`: would a person ship these prompts? Contradictions, leaked data, fragments, growth."""

from __future__ import annotations

import typer

__all__ = ["check_prompts", "DATA_HELP", "SEED_HELP"]

DATA_HELP = ("Data whose speaker names and 6-word runs must not appear in the prompts (a LoCoMo file or a synthetic "
             "spec, as optimize --data); default for a run id: the data of its experiment.")
SEED_HELP = "Seed prompts directory <dir>/<pipeline>/<op>.md the prompts were tuned from (default: the repository's)."


def check_prompts(
    source: str = typer.Argument(..., metavar="SOURCE",
                                 help="A prompts directory <dir>/<pipeline>/<op>.md, or an optimize run id (MLflow)."),
    pipeline: str = typer.Option(None, "--pipeline", "-p", help="Pipeline to check, when SOURCE holds several."),
    data: str = typer.Option(None, "--data", help=DATA_HELP),
    seed: str = typer.Option(None, "--seed-prompts", help=SEED_HELP),
    tracking_uri: str = typer.Option(None, "--tracking-uri",
                                     help="MLflow store of the run (default: $MLFLOW_TRACKING_URI, else "
                                          "sqlite:///mlflow.db)."),
) -> None:
    """Check tuned prompts: contradicting sentences and leaked training data block (exit 1); fragments and growth
    warn."""
    from rich.console import Console

    from memopt.tracking.sources import check_source

    _, _, report = check_source(source, pipeline=pipeline, data=data, seed_dir=seed, tracking_uri=tracking_uri)
    Console(soft_wrap=True, highlight=False, markup=False).print(report.text())
    if report.blocking:
        raise typer.Exit(1)
