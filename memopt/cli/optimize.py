"""`memopt optimize`: run an experiment — attribution feedback → prompt rewrites → MLflow rounds."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from memopt.cli import options

__all__ = ["optimize"]


def optimize(
    experiment: Path = typer.Argument(..., help="Experiment YAML (see experiments/quickstart.yaml)."),
    resume: str = typer.Option(None, "--resume", help="Continue the MLflow parent run RUN_ID after its last round."),
    out: Path = typer.Option(None, "--out", "-o", help="Write the summary JSON here."),
    rounds: int = typer.Option(None, "--rounds", min=1, help="Override `rounds`."),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help="Override `mlflow.tracking_uri`."),
    storage: str = typer.Option(None, "--storage", envvar="MEMOPT_STORAGE", help="Override `optimizer.storage`: an "
                                "Optuna storage (postgresql://..., sqlite:///FILE.db, journal:FILE) where `memopt "
                                "worker` processes score the trials; a URL holding a password is best given in "
                                "$MEMOPT_STORAGE."),
    data: str = typer.Option(None, "--data", help="Override `data.source` (a LoCoMo file or a synthetic spec)."),
    optimizer: str = typer.Option(None, "--optimizer", help="Override `optimizer.name`: a registered optimizer "
                                 "(`memopt plugins --kind optimizers` lists them)."),
    feedback: str = typer.Option(None, "--feedback", help="Override `optimizer.feedback`: a registered feedback "
                                                          "kind (`memopt plugins`; see docs/optimize.md)."),
    attribution: str = typer.Option(None, "--attribution", help="Override `attribution.method`."),
    budget: int = typer.Option(None, "--budget", min=1,
                               help="Override `budget.max_lm_calls` (task, judge, reflection and reporting calls)."),
    max_cost: float = typer.Option(None, "--max-cost", min=0.0, help="Override `budget.max_cost_usd`: stop cleanly "
                                   "once this many dollars are billed (LiteLLM's prices)."),
    seed: int = typer.Option(None, "--seed", help="Override `seed` (SimLM, optimizer proposals and trials; the data "
                             "split keeps `data.split_seed`)."),
    concurrency: int = options.LM_CONCURRENCY,
    workers: int = options.WORKERS_DEPRECATED,
    timeout: float = options.TIMEOUT,
    no_cache: bool = options.NO_CACHE,
    estimate: bool = typer.Option(False, "--estimate", help="Print the expected LM calls, tokens and cost of the "
                                  "experiment (a dry pass with SimLM) and exit, spending nothing."),
    lm: list[str] = typer.Option(None, "--lm", help="Override `lm.*`: SPEC for every role (task, judge, reflection), "
                                 "or ROLE=SPEC for one (e.g. --lm openai/gpt-4.1-mini --lm judge=sim); repeat a role "
                                 "to load-balance endpoints."),
) -> None:
    """Optimize the prompts of a memory system round after round; every round is logged to MLflow."""
    from rich.console import Console
    from rich.markup import escape

    from memopt.cli.tables import rounds_table, usage_table
    from memopt.core.files import check_writable, write_json
    from memopt.optimize.experiment import load_experiment
    from memopt.tracking import check_run_id

    if out is not None:
        check_writable(out, reads=[experiment, data])
    if resume is not None:
        check_run_id(resume)
    concurrency = options.concurrency_of(concurrency, workers)
    exp = load_experiment(experiment, {**lm_overrides(lm or []), "rounds": rounds, "seed": seed,
                                       "mlflow.tracking_uri": tracking_uri, "data.source": data,
                                       "optimizer.storage": storage,
                                       "optimizer.name": optimizer, "optimizer.feedback": feedback,
                                       "attribution.method": attribution,
                                       "budget.max_lm_calls": budget, "budget.max_cost_usd": max_cost,
                                       "lm.concurrency": concurrency, "lm.timeout": timeout,
                                       "lm.cache": False if no_cache else None})
    from memopt.optimize.loop import check_experiment, make_scorer, run_experiment

    check_experiment(exp)  # errors name the key (lm.task: ...) before any LM is built
    if estimate:
        _estimate(exp)
        return
    from memopt.core.progress import RoundProgress
    from memopt.tracking import Tracker

    console = Console(stderr=True, soft_wrap=True)
    scorer = make_scorer(exp)  # builds the LMs: a missing API key or an unpriced --max-cost model stops here
    if exp.budget.max_cost_usd is not None and resume is None:
        _warn_if_round_zero_exceeds(exp, console)
    tracker = Tracker(exp.mlflow.tracking_uri, exp.mlflow.experiment, prompt_prefix=exp.mlflow.prompt_prefix)

    done = 0

    def on_round(record) -> None:
        nonlocal done
        done += 1
        progress.round_done(done, exp.rounds - record.round)
        console.print(escape(round_line(record, exp.rounds)), highlight=False)

    try:
        with RoundProgress(console, scorer.usage, lambda u: _spend(exp, u)) as progress:
            summary = run_experiment(exp, resume=resume, tracker=tracker, on_round=on_round, scorer=scorer,
                                     progress=progress, experiment_file=str(experiment))
    except KeyboardInterrupt:
        run_id = resume or tracker.started_run_id()
        if run_id is not None:
            again = _resume_command(experiment, run_id, {"--tracking-uri": tracking_uri, "--data": data,
                                                         "--optimizer": optimizer, "--feedback": feedback,
                                                         "--attribution": attribution, "--rounds": rounds,
                                                         "--storage": storage, "--seed": seed},
                                    lm or [])
            console.print(f"MLflow run {run_id} ended KILLED at its last checkpoint; continue it with "
                          f"`{escape(again)}`{escape(_password_note(tracking_uri, storage))}", highlight=False)
        raise
    stdout = Console(soft_wrap=True)
    stdout.print(rounds_table(summary))
    stdout.print(usage_table(summary))
    base, final, total = summary["baseline"], summary["final"], summary["usage"]["total"]
    gain = summary["gain"]
    knobs = ", ".join(f"{k}={v}" for k, v in sorted(summary["best_knobs"].items())) or "defaults"
    stdout.print(f"test F1 {_f1(base['test_f1'])} → {_f1(final['test_f1'])} ({_signed(gain['test_f1'])}), "
                 f"test judge {_f1(base['test_judge'])} → {_f1(final['test_judge'])} ({_signed(gain['test_judge'])}); "
                 f"best round {final['round']}, knobs {knobs}", highlight=False)
    stdout.print(f"{summary['lm_calls']} LM calls ({total['made']} made, {total['cached']} from the cache), "
                 f"cost {total['cost']}; run {summary['run_id']}", highlight=False)
    if summary["stopped"]:
        stdout.print(f"stopped: {summary['stopped']}", highlight=False)
    stdout.print(f"MLflow: {tracker.ui_hint()}", highlight=False)
    stdout.print(f"Export: {export_command(summary['run_id'], tracker.tracking_uri)}", highlight=False)
    if note := _password_note(tracker.tracking_uri, None):  # on a line of its own: the line above runs as printed
        stdout.print(f"  (the Export: command{note.removeprefix(';')})", highlight=False)
    if out is not None:
        write_json(out, summary)
    if summary["status"] == "FAILED":
        console.print(f"[bold red]error:[/] {escape(summary['stopped'])}", highlight=False)
        sys.exit(1)


def export_command(run_id: str, tracking_uri: str) -> str:
    """The command that exports a run's best prompts, with the store it is in (unless it is the default one); a
    store URL holding a password is read from ``$MLFLOW_TRACKING_URI`` (as the resume command does), never printed."""
    import shlex

    from memopt.lm.redaction import uri_password
    from memopt.tracking import DEFAULT_TRACKING_URI, shown_uri

    command = shlex.join(["memopt", "export", run_id, "--format", "text", "--out", "tuned-prompts"])
    if tracking_uri == DEFAULT_TRACKING_URI:
        return command
    if uri_password(tracking_uri):
        return f'{command} --tracking-uri "$MLFLOW_TRACKING_URI"'
    return f"{command} --tracking-uri {shlex.quote(shown_uri(tracking_uri))}"


def _warn_if_round_zero_exceeds(exp, console) -> None:
    """Warn, before spending, when --max-cost is below what round 0 (the starting prompts) is expected to cost."""
    from memopt.optimize.estimate import round_zero_cost

    needed = round_zero_cost(exp)
    if needed is not None and needed > exp.budget.max_cost_usd:
        console.print(f"[yellow]warning:[/] --max-cost ${exp.budget.max_cost_usd:g} (budget.max_cost_usd) is below "
                      f"the ${needed:.4f} round 0 is expected to spend (scoring the starting prompts; estimated by "
                      "a SimLM dry pass, see --estimate): the run will likely stop after round 0, before any "
                      "prompt is optimized.", highlight=False)


# Where the resume command takes a URL holding a password from: the environment, never the printed text.
PASSWORD_VARIABLES = {"--storage": "MEMOPT_STORAGE", "--tracking-uri": "MLFLOW_TRACKING_URI"}


def _resume_command(experiment: Path, run_id: str, overrides: dict[str, object], lm: list[str] | None = None) -> str:
    """The command that continues run ``run_id``: the same store and the same overrides (a resume refuses drift).
    A URL holding a password is read from its environment variable (``"$MEMOPT_STORAGE"``), never printed."""
    import shlex

    from memopt.lm.redaction import redact, uri_password

    given = []
    for option, value in overrides.items():
        if value is None:
            continue
        if option in PASSWORD_VARIABLES and uri_password(str(value)):
            given += [option, f'"${PASSWORD_VARIABLES[option]}"']
        else:
            given += [option, shlex.quote(str(value))]
    given += [part for spec in lm or [] for part in ("--lm", shlex.quote(spec))]
    return redact(" ".join([shlex.join(["memopt", "optimize", str(experiment), "--resume", run_id]), *given]))


def _password_note(tracking_uri: str | None, storage: str | None) -> str:
    """What the resume command needs set in the environment: each URL whose password it does not print."""
    from memopt.lm.redaction import redact, uri_password

    needed = [f"{PASSWORD_VARIABLES[option]}={redact(value)}" for option, value
              in (("--tracking-uri", tracking_uri), ("--storage", storage)) if value and uri_password(value)]
    if not needed:
        return ""
    return (f"; it reads {' and '.join(v.split('=', 1)[0] for v in needed)} from the environment: set "
            f"{'; '.join(needed)} with the real password (masked here as ***, it is never printed)")


ROLES = ("task", "judge", "reflection")


def lm_overrides(values: list[str]) -> dict[str, str | list[str]]:
    """``--lm`` values as experiment overrides: ``SPEC`` sets every role, ``ROLE=SPEC`` one; a role given twice
    load-balances its endpoints."""
    from memopt.core.errors import ConfigError

    found: dict[str, list[str]] = {}
    for value in values:
        role, sep, spec = value.partition("=")
        if sep and role.isidentifier():
            if role not in ROLES:
                raise ConfigError(f"--lm {value}: no LM role {role!r}; write SPEC for every role, or ROLE=SPEC with "
                                  f"ROLE one of {', '.join(ROLES)}.")
            roles: tuple[str, ...] = (role,)
        else:
            roles, spec = ROLES, value
        if not spec.strip():
            raise ConfigError(f"--lm {value}: no LM spec (e.g. --lm sim, --lm judge=openai/gpt-4.1-mini).")
        for r in roles:
            found.setdefault(r, []).append(spec.strip())
    return {f"lm.{r}": specs[0] if len(specs) == 1 else specs for r, specs in found.items()}


def round_line(record, rounds: int) -> str:
    """One round as a line: scores, blame, the decision, LM calls, time."""
    from memopt.core.progress import clock

    test = (record.test or {}).get("f1")
    judge = record.val.get("judge")
    errored = sum(record.errored.values())
    blamed = ", ".join(f"{op} {n}" for op, n in record.blamed_ops.items())
    parts = [f"round {record.round}/{rounds}: val F1 {record.val['f1']:.3f}"
             + (f", test F1 {test:.3f}" if test is not None else "")
             + (f", val judge {judge:.3f}" if judge is not None else "")]
    masked = (record.attribution or {}).get("masked")
    if blamed:
        parts.append(f"blamed {blamed}" + (f" (+{masked} answer faults behind them)" if masked else ""))
    parts.append(record.decision or ("starting prompts" if not record.round else
                                     "accepted" if record.accepted else "kept the current prompts"))
    if errored:
        parts.append(f"{errored} errored cases")
    parts.append(f"{record.lm_calls:,} LM calls so far, {clock(record.seconds)}")
    return " · ".join(parts) + "".join(f"\nwarning: {warning}" for warning in getattr(record, "warnings", []))


def _f1(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _signed(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"


def _spend(exp, usage) -> str:
    from memopt.lm.costs import free

    roles = [getattr(exp.lm, r) for r in ("task", "judge", "reflection")]
    if all(free(spec) for spec in roles):
        return f"$0 ({free(roles[0])})"
    return "cost unknown" if usage.unpriced else f"${usage.cost:.4f}"


def _estimate(exp) -> None:
    from rich.console import Console
    from rich.table import Table

    from memopt.optimize.estimate import estimate_experiment

    found = estimate_experiment(exp)
    table = Table(title=f"estimate for {found['experiment']} ({found['rounds']} rounds"
                  + (f"; the dry pass stopped: {found['stopped']}" if found["stopped"] else "") + ")",
                  caption=f"basis: {found['basis']} Dry pass: {found['dry_pass_seconds']} s.")
    for column in ("LMs", "model", "calls", "tokens in", "tokens out", "cost"):
        table.add_column(column, justify="left" if column in ("LMs", "model", "cost") else "right")
    for meter, m in found["meters"].items():
        table.add_row(f"[bold]{meter}" if meter == "total" else meter, m["lm"], f"{m['calls']:,}",
                      f"{m['input_tokens']:,}", f"{m['output_tokens']:,}", m["cost"])
    Console(soft_wrap=True).print(table)
    limit = found["max_cost_usd"]
    cost = found["meters"]["total"]["cost_usd"]
    if limit is not None and cost is not None and cost > limit:
        Console(soft_wrap=True).print(f"--max-cost ${limit:g} will stop the run before that (at about "
                                      f"{limit / cost:.0%} of it).", highlight=False)
