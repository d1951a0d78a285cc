"""`memopt bench ...`: print benchmark figures (speed is measured here, never in timed tests)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from memopt.cli import options

app = typer.Typer(help="Benchmarks: print figures as a table (and JSON with --out).", no_args_is_help=True)


def _print(rows: list[dict[str, Any]], title: str, out: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    for key in rows[0] if rows else []:
        table.add_column(key, justify="left" if isinstance(rows[0][key], str) else "right")
    for row in rows:
        table.add_row(*(str(v) for v in row.values()))
    Console().print(table)
    if out is not None:
        out.write_text(json.dumps(rows, indent=1) + "\n")


@app.command("run")
def run(
    data: str = typer.Option("synthetic:conversations=20,sessions=8,seed=0", "--data", help="Data spec."),
    concurrency: int = options.CONCURRENCY,
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Cases/s and LM calls per case of every pipeline with SimLM."""
    from memopt.bench.run import bench_pipelines

    _print(bench_pipelines(data, concurrency=concurrency), f"pipelines on {data} (SimLM, simulated)", out)


@app.command("simlm")
def simlm(
    data: str = typer.Option("synthetic:conversations=4,sessions=8,seed=0", "--data", help="Data spec."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """SimLM's own cost per call, per operation (prompts recorded from runs of every pipeline)."""
    from memopt.bench.run import bench_simlm

    _print(bench_simlm(data), "SimLM.respond per call (µs)", out)


@app.command("trace")
def trace(
    data: str = typer.Option("synthetic:conversations=20,sessions=8,seed=0", "--data", help="Data spec."),
    pipeline: str = typer.Option("mem0", "--pipeline", "-p", help="Pipeline to trace."),
    sessions: int = typer.Option(1000, "--sessions", help="Sessions of the long conversation for the size test."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per variant (median)."),
    latency_ms: list[float] = typer.Option([0.0, 5.0], "--latency-ms",
                                           help="Simulated LM latency per call (repeatable); 0 = bare SimLM."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Tracing overhead (traced / untraced run time) and build/save/load time and peak memory of a long graph."""
    from memopt.bench.trace import bench_big_graph, bench_trace_overhead

    overhead = [bench_trace_overhead(data, pipeline, repeats, latency) for latency in latency_ms]
    _print(overhead, "tracing overhead (SimLM, simulated)", None)
    big = bench_big_graph(sessions, pipeline)
    _print([big], f"graph of one {sessions}-session conversation", None)
    if out is not None:
        out.write_text(json.dumps({"overhead": overhead, "big_graph": big}, indent=1) + "\n")


@app.command("attribution")
def attribution(
    pipelines: str = typer.Option("long_context,rag,mem0,evermemos", "--pipelines", help="Comma-separated pipelines."),
    data: str = typer.Option("synthetic:conversations=4,sessions=8,seed=7", "--data", help="Data spec."),
    methods: str = typer.Option(None, "--methods", help="Comma-separated methods (default: all six)."),
    cases: Path = typer.Option(None, "--cases", help="Re-score methods on saved bench cases instead of new ones."),
    cases_dir: Path = typer.Option(Path("attribution-bench"), "--cases-dir",
                                   help="Where new bench cases (cases.json + graphs/) are written."),
    long_sessions: int = typer.Option(0, "--long-sessions", min=0,
                                      help="Also time methods on one N-session conversation (e.g. 1000)."),
    memtracebench: Path = typer.Option(None, "--memtracebench", help="Also score methods on MemTraceBench JSON files."),
    out: Path = typer.Option(None, "--out", help="Write {results, cases, counts} as JSON."),
) -> None:
    """Fault-injection bench: error-type and op-id accuracy, judge calls and seconds per case, per method."""
    from memopt.bench.attribution import bench_attribution, bench_long_graph, score_memtracebench
    from memopt.cli.options import parse_ids

    names = parse_ids(pipelines) or []
    report = bench_attribution(pipelines=names, data=data, cases_dir=cases_dir, methods=parse_ids(methods),
                               cases_file=cases)
    _print(report["results"], f"attribution bench ({sum(map(sum, (c.values() for c in report['counts'].values())))} "
                              f"cases, SimLM judge, simulated)", None)
    from memopt.taxonomy import ERROR_TYPES

    _print([{"pipeline": p, **{t: c.get(t, 0) for t in ERROR_TYPES}} for p, c in report["counts"].items()],
           "bench cases by error type", None)
    if long_sessions:
        report["long_graph"] = bench_long_graph(long_sessions)
        _print(report["long_graph"], f"one {long_sessions}-session mem0 conversation", None)
    if memtracebench is not None:
        report["memtracebench"] = score_memtracebench(memtracebench, parse_ids(methods))
        _print(report["memtracebench"]["results"], "MemTraceBench files", None)
    if out is not None:
        out.write_text(json.dumps(report, indent=1) + "\n")


@app.command("optimize")
def optimize(
    experiments: list[Path] = typer.Argument(None, help="Experiment files (default: quickstart and the LoCoMo one)."),
    budget: int = typer.Option(6000, "--budget", min=1, help="LM-call budget of every optimizer."),
    rounds: int = typer.Option(8, "--rounds", min=1, help="Rounds (an optimizer stops earlier when out of budget)."),
    variants: str = typer.Option(None, "--optimizers", help="Comma-separated: memtrace, gepa, score_only, "
                                                             "blame_response (default: all)."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Test F1 before/after and gain per 1,000 LM calls of each optimizer at an equal budget."""
    from memopt.bench.optimize import bench_optimize
    from memopt.cli.options import parse_ids

    files = experiments or [Path("experiments/quickstart.yaml"), Path("experiments/locomo_mem0.yaml")]
    rows = bench_optimize(files, budget=budget, rounds=rounds, variants=parse_ids(variants))
    _print(rows, f"optimizers at {budget} LM calls (SimLM, simulated)", out)


@app.command("latency")
def latency(
    delay: float = typer.Option(0.2, "--delay", min=0.0, help="Seconds the SimLM server waits before every answer."),
    concurrency: list[int] = typer.Option([16], "--concurrency", "-c", min=1, max=256,
                                          help="LM calls in flight per role (repeatable: one run each)."),
    budget: int = typer.Option(2500, "--budget", min=1, help="LM-call budget (the quickstart's, cut to fit)."),
    rounds: int = typer.Option(1, "--rounds", min=1, help="Rounds (the quickstart's 4, cut to fit)."),
    experiment: Path = typer.Option(Path("experiments/quickstart.yaml"), "--experiment", help="Experiment file."),
    repeat: bool = typer.Option(True, "--repeat/--no-repeat", help="Run again on the reply cache (0 new requests "
                                                                    "expected)."),
    model: str = typer.Option("gpt-4.1-mini", "--model", help="Model name sent to the server (SimLM answers any); "
                                                               "LiteLLM prices it for the cost column."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Wall time, server requests and wall / (requests × delay / concurrency) of an experiment over HTTP."""
    from memopt.bench.latency import bench_latency

    rows = bench_latency(delay=delay, concurrency=concurrency, budget=budget, rounds=rounds, experiment=experiment,
                         repeat=repeat, model=model)
    _print(rows, f"{experiment.stem} through memopt serve --delay {delay} (SimLM, simulated)", out)
