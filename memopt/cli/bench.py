"""`memopt bench ...`: print benchmark figures (speed is measured here, never in timed tests)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from memopt.bench.seeds import COPIES, ceiling_text, fmt_interval, needed_text
from memopt.cli import options
from memopt.core.files import check_writable, write_json

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
        write_json(out, rows)


def _check_out(out: Path | None) -> None:
    if out is not None:
        check_writable(out)


@app.command("run")
def run(
    data: str = typer.Option("synthetic:conversations=20,sessions=8,seed=0", "--data", help="Data spec."),
    concurrency: int = options.CONCURRENCY,
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Cases/s and LM calls per case of every pipeline with SimLM."""
    from memopt.bench.run import bench_pipelines

    _check_out(out)
    _print(bench_pipelines(data, concurrency=concurrency), f"pipelines on {data} (SimLM, simulated)", out)


@app.command("simlm")
def simlm(
    data: str = typer.Option("synthetic:conversations=4,sessions=8,seed=0", "--data", help="Data spec."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """SimLM's own cost per call, per operation (prompts recorded from runs of every pipeline)."""
    from memopt.bench.run import bench_simlm

    _check_out(out)
    _print(bench_simlm(data), "SimLM.respond per call (µs)", out)


@app.command("trace")
def trace(
    data: str = typer.Option("synthetic:conversations=20,sessions=8,seed=0", "--data", help="Data spec."),
    pipeline: str = typer.Option("mem0", "--pipeline", "-p", help="Pipeline to trace."),
    sessions: int = typer.Option(1000, "--sessions", min=1,
                                 help="Sessions of the long conversation for the size test."),
    repeats: int = typer.Option(3, "--repeats", min=1, help="Runs per variant (median)."),
    latency_ms: list[float] = typer.Option([0.0, 5.0], "--latency-ms",
                                           help="Simulated LM latency per call (repeatable); 0 = bare SimLM."),
    experiment: Path = typer.Option(Path("experiments/quickstart.yaml"), "--experiment",
                                    help="Experiment whose round 1 is timed with MLflow traces on and off."),
    mlflow_repeats: int = typer.Option(3, "--mlflow-repeats", min=0,
                                       help="Runs per mlflow.traces mode (median); 0 skips the MLflow rows."),
    mlflow_only: bool = typer.Option(False, "--mlflow-only", help="Only the MLflow traces rows."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Tracing overhead (traced / untraced run time), a long graph's size and cost, and MLflow traces on / off."""
    from memopt.bench.trace import bench_big_graph, bench_mlflow_traces, bench_trace_overhead

    _check_out(out)
    overhead = [] if mlflow_only else [bench_trace_overhead(data, pipeline, repeats, lat) for lat in latency_ms]
    big = {} if mlflow_only else bench_big_graph(sessions, pipeline)
    if not mlflow_only:
        _print(overhead, "tracing overhead (SimLM, simulated)", None)
        _print([big], f"graph of one {sessions}-session conversation", None)
    traces = bench_mlflow_traces(experiment, ("none", "sample"), mlflow_repeats) if mlflow_repeats else []
    if traces:
        _print(traces, f"MLflow traces of round 1 of {experiment} (SimLM, simulated; sqlite store)", None)
    if out is not None:
        write_json(out, {"overhead": overhead, "big_graph": big, "mlflow_traces": traces})


@app.command("attribution")
def attribution(
    pipelines: str = typer.Option("long_context,rag,mem0,evermemos", "--pipelines", help="Comma-separated pipelines."),
    data: str = typer.Option("synthetic:conversations=4,sessions=8,seed=7", "--data", help="Data spec."),
    methods: str = typer.Option(None, "--methods", help="Comma-separated attribution methods (default: every "
                                 "registered one; `memopt plugins` lists them)."),
    cases: Path = typer.Option(None, "--cases", help="Re-score methods on saved bench cases instead of new ones."),
    cases_dir: Path = typer.Option(Path("attribution-bench"), "--cases-dir",
                                   help="Where new bench cases (cases.json + graphs/) are written."),
    long_sessions: int = typer.Option(0, "--long-sessions", min=0,
                                      help="Also time methods on one N-session conversation (e.g. 1000)."),
    memtracebench: Path = typer.Option(None, "--memtracebench", file_okay=False,
                                       help="Instead, score methods on MemTraceBench files (DIR/<split>/*.json, "
                                            "smartcomment graphs with annotations): one table per split, each "
                                            "method with the gold evidence and with retrieved evidence."),
    stripped: Path = typer.Option(None, "--stripped", file_okay=False,
                                  help="With --memtracebench: also attribute these graphs (the same files without "
                                       "annotations or evidence ids) from a cases file alone, as `memopt attribute "
                                       "STRIPPED --cases FILE` does, scored against --memtracebench's labels."),
    stripped_cases: Path = typer.Option(None, "--stripped-cases", dir_okay=False,
                                        help="The cases file of --stripped (default: cases.jsonl in the "
                                             "--memtracebench directory)."),
    scale: str = typer.Option(None, "--scale", help="Instead, cases per second and peak memory of `memopt attribute "
                                                    "TRACE --cases FILE` at these multiples of the quickstart's "
                                                    "failures, e.g. 1,10,100 (each size in a fresh process)."),
    labels: Path = typer.Option(None, "--labels", dir_okay=False,
                                help="Instead, score methods against a team's labels (`memopt label`'s labels.jsonl); "
                                     "flagged cases are left out."),
    out: Path = typer.Option(None, "--out", help="Write {results, cases, counts} as JSON."),
) -> None:
    """Fault-injection bench: error-type and op-id accuracy, judge calls and seconds per case, per method."""
    from memopt.bench.attribution import bench_attribution, bench_long_graph, score_memtracebench
    from memopt.cli.options import parse_ids
    from memopt.core.errors import ConfigError
    from memopt.taxonomy import ERROR_TYPES

    _check_out(out)
    if labels is not None:
        _labels(labels, methods, out)
        return
    if scale is not None:
        from memopt.bench.diagnose import QUICKSTART_DATA, bench_scale

        try:
            sizes = tuple(int(x) for x in scale.split(",") if x.strip())
        except ValueError:
            raise ConfigError(f"--scale {scale!r}: comma-separated whole numbers, e.g. 1,10,100.") from None
        if not sizes or min(sizes) < 1:
            raise ConfigError(f"--scale {scale!r}: each size must be at least 1.")
        rows = bench_scale(sizes)
        _print(rows, f"attribution from a trace and a cases file (retrieved evidence), the quickstart's failures "
                     f"({QUICKSTART_DATA}, mem0, run by SimLM: simulated) copied N times; lexical judge", out)
        return
    if stripped is not None and memtracebench is None:
        raise ConfigError("--stripped needs --memtracebench (the annotated graphs whose labels it is scored on).")
    if memtracebench is None and cases is None:  # new cases go there: refuse a file before any work
        check_writable(cases_dir, option="--cases-dir", directory=True)
        check_writable(cases_dir / "graphs", option="--cases-dir", directory=True)
        check_writable(cases_dir / "cases.json", option="--cases-dir")
    if memtracebench is not None:
        report = score_memtracebench(memtracebench, parse_ids(methods, "--methods"), evidence=("gold", "retrieved"))
        for split, n_files in report["files"].items():
            rows = [{k: v for k, v in r.items() if k != "split"} for r in report["results"] if r["split"] == split]
            labels = ", ".join(f"{t} {c}" for t, c in report["labels"][split].items()) or "none"
            _print(rows, f"MemTraceBench · {split} ({n_files} graphs; lexical judge)", None)
            typer.echo(f"{split}: memory-error labels {labels}; "
                       f"{report['skipped_non_memory'][split]} non-memory labels skipped")
        if stripped is not None:
            from memopt.bench.diagnose import score_cases

            cases_file = stripped_cases or memtracebench / "cases.jsonl"
            report["stripped"] = score_cases(memtracebench, stripped, cases_file, parse_ids(methods, "--methods"))
            _print(report["stripped"], f"{stripped} with {cases_file} alone (no annotations, no evidence ids; "
                                       "lexical judge)", None)
        if out is not None:
            write_json(out, report)
        return
    names = parse_ids(pipelines, "--pipelines") or []
    report = bench_attribution(pipelines=names, data=data, cases_dir=cases_dir, methods=parse_ids(methods, "--methods"),
                               cases_file=cases)
    _print(report["results"], f"attribution bench ({sum(map(sum, (c.values() for c in report['counts'].values())))} "
                              f"cases of SimLM runs, simulated; lexical judge)", None)
    _print([{"pipeline": p, **{t: c.get(t, 0) for t in ERROR_TYPES}} for p, c in report["counts"].items()],
           "bench cases by error type", None)
    if long_sessions:
        report["long_graph"] = bench_long_graph(long_sessions)
        _print(report["long_graph"], f"one {long_sessions}-session mem0 conversation", None)
    if out is not None:
        write_json(out, report)


def _labels(path: Path, methods: str | None, out: Path | None) -> None:
    """``--labels``: every method against a team's labels, one table."""
    from memopt.bench.labels import score_labels
    from memopt.cli.options import parse_ids

    report = score_labels(path, parse_ids(methods, "--methods"))
    decisions = ", ".join(f"{k} {v}" for k, v in report["decisions"].items()) or "none"
    _print(report["results"], f"attribution methods against the labels of {path} (lexical judge)", None)
    typer.echo(f"labels: {decisions}; {report['left_out']} flagged case(s) left out")
    if out is not None:
        write_json(out, report)


@app.command("evidence")
def evidence(
    source: str = typer.Argument(..., help="MemTraceBench-format graphs (a directory), a LoCoMo or LongMemEval file, "
                                           "or a synthetic spec: any data with gold evidence."),
    ks: str = typer.Option("1,2,4,8,16", "--k", help="Comma-separated k of recall@k."),
    embedding_lm: str = typer.Option("sim", "--embedding-lm", envvar="MEMOPT_EMBEDDING_LM",
                                     help="The embedding LM: 'sim' (a deterministic local embedding), a LiteLLM "
                                          "embedding model, or 'MODEL@http://host:port/v1'."),
    limit: int = typer.Option(None, "--limit", min=1, help="At most this many questions."),
    out: Path = typer.Option(None, "--out", help="Also write the report as JSON."),
) -> None:
    """recall@k (and hit@k) of the evidence attribution retrieves without gold, against the data's gold evidence:
    BM25, dense, and their fusion (with the expected answer in the query), and the fusion on the question alone."""
    from memopt.bench.evidence import bench_evidence
    from memopt.core.errors import ConfigError
    from memopt.lm.embedding import make_embedder

    _check_out(out)
    try:
        chosen = tuple(sorted({int(k) for k in ks.split(",") if k.strip()}))
    except ValueError:
        raise ConfigError(f"--k {ks!r}: comma-separated whole numbers, e.g. 1,2,4,8.") from None
    if not chosen or min(chosen) < 1:
        raise ConfigError(f"--k {ks!r}: each k must be at least 1.")
    report = bench_evidence(source, ks=chosen, embedder=make_embedder(embedding_lm), limit=limit)
    rows = [{k: v for k, v in r.items() if not k.startswith("hit@")} for r in report["rows"]]
    _print(rows, f"evidence recall@k · {source} ({report['questions']} questions with gold evidence; "
                 f"embedding {report['embedding']})", None)
    if out is not None:
        write_json(out, report)


@app.command("optimize")
def optimize(
    experiments: list[Path] = typer.Argument(None, help="Experiment files (default: quickstart and the LoCoMo one)."),
    budget: int = typer.Option(6000, "--budget", min=1, help="LM-call budget of every optimizer."),
    rounds: int = typer.Option(8, "--rounds", min=1, help="Rounds (an optimizer stops earlier when out of budget)."),
    seeds: int = typer.Option(5, "--seeds", min=1, help="Runs per optimizer (seeds: the experiment's, +1, ...); "
                                                         "comparisons are paired by seed."),
    variants: str = typer.Option(None, "--optimizers", help="Comma-separated: memtrace, gepa, gepa_outcome, "
                                                             "score_only, blame_response (default: all)."),
    first_seed: int = typer.Option(None, "--first-seed", min=0,
                                   help="Seed of the first run (default: each experiment's); with --seeds, runs seeds "
                                        "first..first+seeds-1."),
    markdown: bool = typer.Option(False, "--markdown", help="Also print the tables as Markdown (as in docs/)."),
    out: Path = typer.Option(None, "--out", help="Write {rows, comparisons, runs} as JSON (after every run: an "
                                                  "interrupted bench keeps the runs it finished)."),
) -> None:
    """Test F1 before/after (mean ± sd, 95 % interval of the gain over seeds), share of the reference's gain and gain
    per 1,000 LM calls of each optimizer at an equal budget, next to the reference row (the best subset of catalogue
    directives chosen on val, no optimizer; no ceiling); each claim of the target ordering with its p-value (stated
    only where significant; none over seeds that do not vary the runs)."""
    from memopt.bench.optimize import bench_optimize
    from memopt.cli.options import parse_ids

    _check_out(out)
    files = experiments or [Path("experiments/quickstart.yaml"), Path("experiments/locomo_mem0.yaml")]

    def finished(run: dict[str, Any], so_far: dict[str, Any]) -> None:
        _progress(f"{run['experiment']} {run['optimizer']}", run, so_far, out)

    report = bench_optimize(files, budget=budget, rounds=rounds, variants=parse_ids(variants, "--optimizers"),
                            seeds=seeds, first_seed=first_seed, on_run=finished)
    _show_optimize(report, markdown, out)


def _show_optimize(report: dict[str, Any], markdown: bool, out: Path | None) -> None:
    from memopt.bench.optimize import markdown_table

    shown = [{"experiment": r["experiment"], "optimizer": r["optimizer"], "seeds": str(r["seeds"]),
              "F1 before": f"{r['test_f1_before']:.3f}",
              "after ± sd": f"{r['test_f1_after']:.3f} ± {r['test_f1_after_sd']:.3f}",
              "gain ± sd": f"{r['gain']:+.3f} ± {r['gain_sd']:.3f}",
              "95 % interval": fmt_interval(r["gain_low"], r["gain_high"]),
              "share of reference gain": _share(r["share_of_oracle_gain"]),
              "LM calls": f"{r['lm_calls']:,}", "s / run": str(r["seconds"])} for r in report["rows"]]
    _print(shown, f"optimizers at {report['budget']} LM calls, {report['seeds']} seed(s) (SimLM, simulated)", None)
    if not report.get("complete", True):
        print(f"partial: {len(report['runs'])} of the {report['planned']} runs planned")
    for experiment, comparisons in report["comparisons"].items():
        _print_claims(comparisons, experiment)
    if markdown:
        print(markdown_table(report))
    if out is not None:
        write_json(out, report)


def _progress(label: str, run: dict[str, Any], so_far: dict[str, Any], out: Path | None) -> None:
    """One line per finished bench run on stderr; the report of the runs so far in ``out``, so an interrupted bench
    keeps them."""
    print(f"[{len(so_far['runs'])}/{so_far['planned']}] {label} seed {run['seed']}: test F1 "
          f"{run['test_f1_before']:.3f} → {run['test_f1_after']:.3f} ({run['gain']:+.3f}) in {run['lm_calls']:,} "
          f"LM calls, {run['seconds']} s", file=sys.stderr, flush=True)
    if out is not None and not so_far["complete"]:
        write_json(out, so_far)


def _share(share: float | None) -> str:
    return "—" if share is None else f"{share:.2f}"


def _print_claims(comparisons: dict[str, dict[str, Any]], title: str) -> None:
    """One line per claim: its verdict, the paired mean difference, its 95 % interval and p."""
    for claim, c in comparisons.items():
        if c["n"] == 0:
            print(f"{title}: {claim}: n/a")
            continue
        p = "—" if c["p"] is None else f"{c['p']:.3f}"
        if c["verdict"] == COPIES:
            print(f"{title}: {claim}: {COPIES}: each side gave one run at all {c['n']} seeds (difference "
                  f"{c['mean']:+.3f}); no p-value over copies")
            continue
        seeds = c.get("seeds_needed")  # a count, or "more than ..." beyond the limit
        needed = "" if seeds is None else \
            f"; {'about ' if isinstance(seeds, int) else ''}{needed_text(c)} seeds would show it if the difference held"
        print(f"{title}: {claim}: {c['verdict']} (difference {c['mean']:+.3f}, 95 % interval "
              f"{fmt_interval(c['low'], c['high'])}, p {p}, {c['n']} seed(s){needed}{_ceiling_clause(c)})")


def _ceiling_clause(c: dict[str, Any]) -> str:
    """What a run at the reference on every seed would need, where the claim is not shown (empty otherwise)."""
    at = c.get("ceiling_seeds_needed")
    if at is None or c["verdict"] == "holds":
        return ""
    if at == "never":
        return "; a run at the reference on every seed would not beat it on average"
    return f"; a run at the reference on every seed would need {'about ' if isinstance(at, int) else ''}" \
           f"{ceiling_text(c)} seeds"


def _print_directives(directives: dict[str, dict[str, Any]], title: str) -> None:
    """Per feedback kind, how many of its runs ended with each catalogue directive added to the seed (or dropped)."""
    print(f"{title}: the directives each kind's runs ended with (as SimLM reads the final prompts; runs with it / "
          "runs)")
    for name, found in directives.items():
        parts = [f"{key} {n}/{found['runs']}" for key, n in found["added"].items()]
        parts += [f"dropped {key} {n}/{found['runs']}" for key, n in found["dropped"].items()]
        print(f"  {name}: {', '.join(parts) or 'none added'}")


@app.command("feedback")
def feedback(
    experiment: Path = typer.Option(Path("experiments/quickstart.yaml"), "--experiment", "-e",
                                    help="Experiment file (default: the quickstart)."),
    budget: int = typer.Option(6000, "--budget", min=1, help="LM-call budget of every run."),
    seeds: int = typer.Option(5, "--seeds", min=1, help="Runs per feedback kind (seeds: the experiment's, +1, ...); "
                                                         "comparisons are paired by seed."),
    rounds: int = typer.Option(8, "--rounds", min=1, help="Rounds (a run stops earlier when out of budget)."),
    variants: str = typer.Option(None, "--variants", help="Comma-separated feedback kinds (default: every "
                                                          "registered one but the format controls attribution_prose, "
                                                          "..._intl; `memopt plugins` lists them)."),
    first_seed: int = typer.Option(None, "--first-seed", min=0,
                                   help="Seed of the first run (default: the experiment's); split seeds over "
                                        "processes with it, then `memopt bench merge` their --out files."),
    resplit: bool = typer.Option(False, "--resplit", help="Each seed also splits the data its own way "
                                                          "(data.split_seed = the seed), with its own oracle: "
                                                          "compare over splits, not on one."),
    renderings: Path = typer.Option(None, "--renderings", help="A Python file of render functions (ExampleParts) -> "
                                                              "str: each runs as the feedback kind attribution_<name> "
                                                              "(with --variants, name them there)."),
    markdown: bool = typer.Option(False, "--markdown", help="Also print the table as Markdown (as in docs/)."),
    out: Path = typer.Option(None, "--out", help="Write {rows, oracle, ordering, directives, runs} as JSON."),
) -> None:
    """The memtrace optimizer at one budget with each kind of feedback, over seeds, next to the reference (the catalogue
    oracle: the best directive subset chosen on val), and which catalogue directives each kind's runs ended with."""
    from memopt.bench.feedback import bench_feedback
    from memopt.cli.options import parse_ids
    from memopt.feedback.kinds import rendering_kinds

    _check_out(out)
    if renderings is not None:
        rendered = rendering_kinds(str(renderings))
        variants = variants or ",".join(["attribution", "outcome", *rendered])

    def finished(run: dict[str, Any], so_far: dict[str, Any]) -> None:
        _progress(run["variant"], run, so_far, out)

    report = bench_feedback(experiment, budget=budget, seeds=seeds, rounds=rounds,
                            variants=parse_ids(variants, "--variants"), first_seed=first_seed, resplit=resplit,
                            on_run=finished)
    _show_feedback(report, markdown, out)


@app.command("merge")
def merge(
    reports: list[Path] = typer.Argument(..., help="`memopt bench feedback --out` files of one experiment and budget, "
                                                   "or `memopt bench optimize --out` files of one budget."),
    renderings: Path = typer.Option(None, "--renderings", help="The --renderings file the feedback reports ran "
                                                              "with: its kinds attribution_<name> are known again."),
    markdown: bool = typer.Option(False, "--markdown", help="Also print the table as Markdown (as in docs/)."),
    out: Path = typer.Option(None, "--out", help="Write the merged report as JSON."),
) -> None:
    """Merge bench reports run apart (seeds split over processes with --first-seed, or an interrupted bench and the
    rest) into one: rows and verdicts (paired by seed) over all their runs, printed as the bench prints them."""
    from memopt.bench.feedback import merge_experiments, merge_feedback, summary_table
    from memopt.bench.optimize import merge_optimize
    from memopt.core.errors import ConfigError
    from memopt.core.files import read_json
    from memopt.feedback.kinds import rendering_kinds

    if out is not None:
        check_writable(out, reads=reports)
    if renderings is not None:
        rendering_kinds(str(renderings))
    if len(set(reports)) < len(reports):
        raise ConfigError("bench merge: a report is named twice; name each --out file once.")
    found = {str(path): read_json(path, missing="no such report; pass the --out file of a `memopt bench feedback` "
                                                "or `memopt bench optimize` run.") for path in reports}
    kinds = {name: "optimize" if isinstance(r, dict) and ("oracles" in r or "comparisons" in r) else "feedback"
             for name, r in found.items()}
    if len(set(kinds.values())) > 1:
        optimize = next(name for name, kind in kinds.items() if kind == "optimize")
        feedback = next(name for name, kind in kinds.items() if kind == "feedback")
        raise ConfigError(f"bench merge: {optimize} is a `bench optimize` report and {feedback} is not; merge "
                          "reports of one bench.")
    if "optimize" in kinds.values():
        _show_optimize(merge_optimize(found), markdown, out)
    elif len({r.get("experiment") for r in found.values() if isinstance(r, dict)}) > 1:
        merged = merge_experiments(found)  # several experiments: each merged, then one row per experiment
        for report in merged.values():
            _show_feedback(report, markdown, None)
        print(summary_table(merged))
        if out is not None:
            write_json(out, {"experiments": merged})
    else:
        _show_feedback(merge_feedback(found), markdown, out)


def _show_feedback(report: dict[str, Any], markdown: bool, out: Path | None) -> None:
    from memopt.bench.feedback import markdown_table

    seeds, budget = report["seeds"], report["budget"]
    shown = [{"feedback": r["variant"], "ops": r["ops"], "F1 before": f"{r['test_f1_before']:.3f}",
              "after ± sd": f"{r['test_f1_after']:.3f} ± {r['test_f1_after_sd']:.3f}",
              "gain ± sd": f"{r['gain']:+.3f} ± {r['gain_sd']:.3f}",
              "95 % interval": fmt_interval(r["gain_low"], r["gain_high"]),
              "share of reference gain": _share(r["share_of_oracle_gain"]),
              "LM calls": f"{r['lm_calls']:,}", "s / run": str(r["seconds"])} for r in report["rows"]]
    contiguous = len(seeds) > 1 and seeds == list(range(seeds[0], seeds[-1] + 1))
    span = f"{len(seeds)} seed(s)" + (f" ({seeds[0]}–{seeds[-1]})" if contiguous else "")
    if report.get("resplit"):
        splits = len({json.dumps(o.get("split"), sort_keys=True) for o in report["split_oracles"].values()})
        span += f", each its own split ({splits} distinct)"
    _print(shown, f"{report['experiment']}: feedback kinds at {budget} LM calls, {span} "
                  "(memtrace optimizer; SimLM, simulated)", None)
    if not report.get("complete", True):
        print(f"{report['experiment']}: partial, {len(report['runs'])} of the {report['planned']} runs planned")
    _print_claims(report["ordering"], report["experiment"])
    _print_directives(report["directives"], report["experiment"])
    if markdown:
        print(markdown_table(report))
    if out is not None:
        write_json(out, report)


@app.command("oracle")
def oracle(
    experiment: Path = typer.Option(Path("experiments/quickstart.yaml"), "--experiment", "-e",
                                    help="Experiment file (default: the quickstart)."),
    out: Path = typer.Option(None, "--out", help="Also write the oracle (prompts, directives, figures) as JSON."),
) -> None:
    """Val and test F1 of the seed prompts, the all-on prompt (every catalogue directive) and the best-subset
    oracle (directive subsets per op and knobs chosen on val: a reference, not a ceiling), with SimLM as task LM."""
    from memopt.bench.oracle import catalogue_oracle
    from memopt.optimize.experiment import load_experiment

    _check_out(out)
    result = catalogue_oracle(load_experiment(experiment))
    rows = [{"prompt": "seed", "directives added": "—", "knobs": "—", "val F1": result["seed_val_f1"],
             "test F1": result["seed_test_f1"], "task output tokens": result["seed_output_tokens"]}]
    for name, entry in (("all on", result["all_on"]), ("best subset", result)):
        added = "; ".join(f"{op}: {', '.join(ids) or 'none'}" for op, ids in entry["directives"].items())
        rows.append({"prompt": name, "directives added": added,
                     "knobs": ", ".join(f"{k} {v}" for k, v in entry["knobs"].items()), "val F1": entry["val_f1"],
                     "test F1": entry["test_f1"], "task output tokens": entry["output_tokens"]})
    _print(rows, f"catalogue oracle of {result.get('experiment', experiment.stem)} (SimLM, simulated; "
                 f"{result['choices_evaluated']} choices scored on val)", None)
    if out is not None:
        write_json(out, result)


@app.command("latency")
def latency(
    delay: float = typer.Option(0.2, "--delay", min=0.0, max=3600.0,
                                help="Seconds the SimLM server waits before every answer."),
    concurrency: list[int] = typer.Option([16], "--concurrency", "-c", min=1, max=256,
                                          help="LM calls in flight per role (repeatable: one run each)."),
    budget: int = typer.Option(2500, "--budget", min=1, help="LM-call budget (the quickstart's, cut to fit)."),
    rounds: int = typer.Option(1, "--rounds", min=1, help="Rounds (the quickstart's 4, cut to fit)."),
    experiment: Path = typer.Option(Path("experiments/quickstart.yaml"), "--experiment", help="Experiment file."),
    repeat: bool = typer.Option(True, "--repeat/--no-repeat", help="Run again on the reply cache (0 new requests "
                                                                    "expected)."),
    model: str = typer.Option("gpt-4.1-mini", "--model", help="Model name sent to the server (SimLM answers any); "
                                                               "LiteLLM prices it for the cost column."),
    engine: list[str] = typer.Option(["litellm"], "--engine",
                                     help="lm.engine of the runs (repeatable: litellm, dspy; one set of runs each)."),
    anchor_calls: int = typer.Option(200, "--anchor-calls", min=0,
                                     help="Calls of each bare dspy.Predict anchor (0: no anchors)."),
    breakdown: bool = typer.Option(False, "--breakdown", help="Run once more under yappi and split the client CPU "
                                                             "per request by where it goes (needs yappi)."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Wall time, server requests, wall / (requests × delay / concurrency) and client CPU per request over HTTP."""
    from memopt.bench.latency import bench_latency
    from memopt.lm.build import ENGINES

    _check_out(out)
    unknown = [e for e in engine if e not in ENGINES]
    if unknown:
        raise typer.BadParameter(f"{', '.join(unknown)}: choose from {', '.join(ENGINES)}", param_hint="--engine")
    report = bench_latency(delay=delay, concurrency=concurrency, budget=budget, rounds=rounds, experiment=experiment,
                           repeat=repeat, model=model, engines=engine, anchor_calls=anchor_calls, profile=breakdown)
    if report["anchors"]:
        _print(report["anchors"], "anchors: a bare dspy.Predict through memopt serve (client CPU per request)", None)
    _print(report["runs"], f"{experiment.stem} through memopt serve --delay {delay} (SimLM, simulated)", None)
    for label, rows in report["breakdown"].items():
        _print(rows, f"client CPU per request by where it goes ({label}; yappi estimates)", None)
    if out is not None:
        write_json(out, report)


@app.command("workers")
def workers(
    workers: list[int] = typer.Option([1, 2, 3], "--workers", "-w", min=1, max=16,
                                      help="`memopt worker` processes (repeatable: one round each)."),
    delay: float = typer.Option(0.2, "--delay", min=0.0, max=3600.0,
                                help="Seconds the SimLM server waits before every answer."),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1, max=256, help="lm.concurrency of each process."),
    trials: int = typer.Option(12, "--trials", min=1, help="optimizer.trials of the round."),
    batch: int = typer.Option(6, "--batch", min=1, help="optimizer.trial_batch (configurations scored at once)."),
    storage: str = typer.Option(None, "--storage", help="Optuna storage shared by the processes (default: a fresh "
                                                         "SQLite file per row)."),
    out: Path = typer.Option(None, "--out", help="Also write the rows as JSON."),
) -> None:
    """Wall time of one optimize round with 1, 2, 3 worker processes at a fixed LM delay, as ratios."""
    from memopt.bench.workers import bench_workers

    _check_out(out)
    rows = bench_workers(workers=workers, delay=delay, concurrency=concurrency, trials=trials, batch=batch,
                         storage=storage)
    _print(rows, f"one round, {trials} trials in batches of {batch}, memopt serve --delay {delay} (SimLM, simulated)",
           out)
