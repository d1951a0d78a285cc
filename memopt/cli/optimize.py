"""`memopt optimize`: run an experiment — attribution feedback → prompt rewrites → MLflow rounds."""

from __future__ import annotations

from pathlib import Path

import typer

__all__ = ["optimize"]


def optimize(
    experiment: Path = typer.Argument(..., help="Experiment YAML (see experiments/quickstart.yaml)."),
    resume: str = typer.Option(None, "--resume", help="Continue the MLflow parent run RUN_ID after its last round."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the summary JSON here."),
    rounds: int = typer.Option(None, "--rounds", min=1, help="Override `rounds`."),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help="Override `mlflow.tracking_uri`."),
    data: str = typer.Option(None, "--data", help="Override `data.source` (a LoCoMo file or a synthetic spec)."),
    optimizer: str = typer.Option(None, "--optimizer", help="Override `optimizer.name`: memtrace, score_only, gepa."),
    feedback: str = typer.Option(None, "--feedback", help="Override `optimizer.feedback`: attribution, outcome, "
                                                          "score, empty, misleading (controls; see the README)."),
    attribution: str = typer.Option(None, "--attribution", help="Override `attribution.method`."),
    budget: int = typer.Option(None, "--budget", min=1, help="Override `budget.max_lm_calls`."),
) -> None:
    """Optimize the prompts of a memory system round after round; every round is logged to MLflow."""
    from rich.console import Console

    from memopt.cli.tables import rounds_table
    from memopt.experiment import load_experiment
    from memopt.files import check_writable, write_json
    from memopt.optimize.run import run_experiment
    from memopt.tracking import Tracker, check_run_id

    if out is not None:
        check_writable(out)
    if resume is not None:
        check_run_id(resume)
    exp = load_experiment(experiment, {"rounds": rounds, "mlflow.tracking_uri": tracking_uri, "data.source": data,
                                       "optimizer.name": optimizer, "optimizer.feedback": feedback,
                                       "attribution.method": attribution,
                                       "budget.max_lm_calls": budget})
    console = Console(stderr=True, soft_wrap=True)
    tracker = Tracker(exp.mlflow.tracking_uri, exp.mlflow.experiment)

    def on_round(record) -> None:
        test = (record.test or {}).get("f1")
        console.print(f"round {record.round}: val F1 {record.val['f1']:.3f}"
                      + (f", test F1 {test:.3f}" if test is not None else "")
                      + (f", blamed {record.blamed_ops}" if record.blamed_ops else "")
                      + (" — accepted " + ", ".join(record.changed_ops) if record.accepted else
                         (" — kept the current prompts" if record.round else "")) + f" ({record.lm_calls} LM calls)",
                      highlight=False)

    try:
        summary = run_experiment(exp, resume=resume, tracker=tracker, on_round=on_round)
    except KeyboardInterrupt:
        run_id = resume or tracker.started_run_id()
        if run_id is not None:
            console.print(f"MLflow run {run_id} ended KILLED at its last checkpoint; continue it with "
                          f"`memopt optimize {experiment} --resume {run_id}`", highlight=False)
        raise
    stdout = Console(soft_wrap=True)
    stdout.print(rounds_table(summary))
    base, final = summary["baseline"], summary["final"]
    stdout.print(f"test F1 {base['test_f1']:.3f} → {final['test_f1']:.3f} (best round {final['round']}), "
                 f"{summary['lm_calls']} LM calls; run {summary['run_id']}", highlight=False)
    stdout.print(f"MLflow: {tracker.ui_hint()}", highlight=False)
    stdout.print(f"Export: memopt export {summary['run_id']} --format text --out tuned-prompts", highlight=False)
    if out is not None:
        write_json(out, summary)
