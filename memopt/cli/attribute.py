"""`memopt attribute`: blame every failed answer of a traced run on its earliest decisive faulty op."""

from __future__ import annotations

from pathlib import Path

import typer

from memopt.cli import options

__all__ = ["attribute"]


def attribute(
    results: Path = typer.Option(..., "--results", "-r", help="results.json written by `memopt run`."),
    trace: Path = typer.Option(..., "--trace", "-t", help="The graph directory of that run (`memopt run --trace`)."),
    method: str = typer.Option("memtrace", "--method", "-m",
                               help="memtrace, counterfactual, all_at_once, step_by_step, binary_search, "
                                    "blame_response."),
    verify: bool = typer.Option(False, "--verify", help="Confirm each blamed op by replay with an oracle correction."),
    judge_lm: str = typer.Option("sim", "--judge-lm", envvar="MEMOPT_JUDGE_LM",
                                 help="Judge: an LM spec ('sim', 'openai/...'), or 'lexical' (SimLM's rules, direct)."),
    out: Path = typer.Option(Path("attributions.jsonl"), "--out", "-o", help="Where to write the attributions."),
    concurrency: int = options.CONCURRENCY,
    no_cache: bool = options.NO_CACHE,
) -> None:
    """Attribute each failed case to an operation and an error type; print counts by type and by op."""
    from rich.console import Console
    from rich.table import Table

    from memopt.attribution.methods import METHODS
    from memopt.attribution.run import attribute_run, summarize_attributions
    from memopt.attribution.types import save_attributions
    from memopt.errors import ConfigError
    from memopt.evaluate import RunResult

    if method not in METHODS:
        raise ConfigError(f"--method {method!r}: choose one of {', '.join(METHODS)}.")
    run = RunResult.load(results)
    judge, workers = _judge(judge_lm, concurrency, cache=not no_cache)
    found = attribute_run(run, trace, judge, method=method, verify=verify, workers=workers)
    save_attributions(found, out)
    summary = summarize_attributions(found)
    console = Console(soft_wrap=True)
    table = Table(title=f"{summary['n']} failed cases of {run.pipeline} · {method}"
                  + (" · simulated judge" if judge_lm in ("sim", "lexical") or judge_lm.startswith("sim:") else ""))
    table.add_column("error type")
    table.add_column("n", justify="right")
    table.add_column("operation")
    table.add_column("n", justify="right")
    types, ops = list(summary["by_error_type"].items()), list(summary["by_operation"].items())
    for i in range(max(len(types), len(ops))):
        t, o = types[i] if i < len(types) else ("", ""), ops[i] if i < len(ops) else ("", "")
        table.add_row(str(t[0]), str(t[1]), str(o[0]), str(o[1]))
    console.print(table)
    extra = f", verified {summary['verified']:.0%}" if summary["verified"] is not None else ""
    console.print(f"{summary['judge_calls_per_case']} judge calls per case{extra} → {out}", highlight=False)


def _judge(spec: str, concurrency: int | None, *, cache: bool) -> tuple:
    """The judge for a spec, and how many cases to attribute at once (the judge LM's concurrency)."""
    from memopt.judge import LexicalJudge, LMJudge
    from memopt.lm.config import make_lm
    from memopt.lm.pool import LMSlots, role_concurrency

    if spec == "lexical":
        return LexicalJudge(), concurrency or 1
    limit = role_concurrency(concurrency, {"judge": spec})["judge"]
    return LMJudge(make_lm(spec, callbacks=[LMSlots(limit, "--concurrency")], cache=cache)), limit
