"""`memopt worker`: score the candidate trials of a running `memopt optimize` from another process or machine.

The worker loads the same experiment file as the coordinator (its pipeline, prompts, data and task model
must match the run's, else one error says which key differs), joins the run in the shared Optuna storage
(``--join RUN_ID``, or the newest open run of this experiment), scores queued trials on the val split
with its own LMs (``--lm`` points it at another endpoint of the same model), and exits when the run ends.
See docs/scaling-out.md.
"""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["worker"]


def worker(
    experiment: Path = typer.Argument(..., help="The experiment YAML the coordinator runs."),
    storage: str = typer.Option(None, "--storage", envvar="MEMOPT_STORAGE", help="The coordinator's Optuna storage "
                                "(postgresql://..., sqlite:///FILE.db, journal:FILE; or $MEMOPT_STORAGE); default: "
                                "the experiment's optimizer.storage."),
    join: str = typer.Option(None, "--join", help="The MLflow parent run id of the optimize run to work for "
                             "(default: the newest open run of this experiment in the storage)."),
    wait: float = typer.Option(60.0, "--wait", min=0.0, help="Seconds to wait for the run to appear."),
    lm: list[str] = typer.Option(None, "--lm", help="Override `lm.*` as in memopt optimize (SPEC, or ROLE=SPEC); "
                                 "the task model's name must stay the coordinator's."),
    concurrency: int = typer.Option(None, "--concurrency", min=1, max=256, help="Override `lm.concurrency`."),
    name: str = typer.Option("", "--name", help="This worker's name in the trials' user attrs (default: pid)."),
) -> None:
    """Score trials of a running `memopt optimize` (shared Optuna storage) until the run ends."""
    from memopt.cli.optimize import lm_overrides
    from memopt.core.errors import ConfigError
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import check_experiment
    from memopt.optimize.worker import run_worker

    exp = load_experiment(experiment, {**lm_overrides(lm or []), "lm.concurrency": concurrency,
                                       "optimizer.storage": storage})
    if exp.optimizer.storage is None:
        raise ConfigError(f"{experiment}: give --storage URL (the coordinator's optimizer.storage).")
    check_experiment(exp)
    report = run_worker(exp, exp.optimizer.storage, join=join, wait=wait, name=name,
                        on_trial=lambda what: typer.echo(f"scored {what}", err=True), experiment_file=str(experiment))
    typer.echo(f"run {report.run_id} ended: {report.trials} trial(s) scored, {report.calls} LM call(s), "
               f"{report.lost} taken back")
