"""`memopt attribute`: blame every failed answer of a trace on its earliest decisive faulty op."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from memopt.cli import options

__all__ = ["attribute"]


def attribute(
    trace_dir: Path = typer.Argument(None, metavar="[TRACE]",
                                     help="A trace directory: memopt's graphs, a tapped Mem0's records.jsonl, or "
                                          "smartcomment / MemTraceBench graphs (with or without annotations)."),
    results: Path = typer.Option(None, "--results", "-r", help="results.json written by `memopt run` (says which "
                                                                "cases failed; the trace is that run's --trace)."),
    trace: Path = typer.Option(None, "--trace", "-t", help="The trace directory (the same as TRACE)."),
    cases: Path = typer.Option(None, "--cases",
                               help="The failed cases, JSON lines: question, expected (the answer or the user's "
                                    "correction; a list: every item needed), optional prediction, date, graph. "
                                    "Without it (and --results), the graphs' own judge ops say which answers were "
                                    "wrong."),
    prior: Path = typer.Option(None, "--prior", help="A system prior (YAML: overview, stages: {op-name pattern: "
                                                      "stage}) for graphs memopt did not make."),
    retrieve: bool = typer.Option(False, "--retrieve", help="Retrieve the evidence even where the graphs hold gold "
                                                            "evidence (as for a production trace)."),
    top_k: int = typer.Option(8, "--evidence-k", min=1, max=100, help="Turns retrieved as evidence when there is "
                                                                      "no gold evidence."),
    embedding_lm: str = typer.Option("sim", "--embedding-lm", envvar="MEMOPT_EMBEDDING_LM",
                                     help="The embedding LM of evidence retrieval: 'sim' (a deterministic local "
                                          "embedding), a LiteLLM embedding model, or 'MODEL@http://host:port/v1'."),
    method: str = typer.Option("memtrace", "--method", "-m",
                               help="A registered attribution method (`memopt plugins` lists them; "
                                    "plug-ins included)."),
    verify: bool = typer.Option(False, "--verify", help="Confirm each blamed op by replay with an oracle correction "
                                                        "(runs of `memopt run` only, with --results)."),
    masked: bool = typer.Option(False, "--masked",
                                help="Also blame the answer op behind each upstream fault when, replayed with the "
                                     "evidence in its context, it still answers wrong (an extra line with "
                                     "details.masked_by; one task call on the LM the graph recorded and one judge "
                                     "call per such failure; with --results only)."),
    judge_lm: str = typer.Option("sim", "--judge-lm", envvar="MEMOPT_JUDGE_LM",
                                 help="Judge: an LM spec ('sim', 'openai/...'), or a registered judge: 'lexical' "
                                      "(SimLM's rules, direct), plug-ins (`memopt plugins --kind judges`)."),
    out: Path = typer.Option(Path("attributions.jsonl"), "--out", "-o", help="Where to write the attributions."),
    memtracebench_out: Path = typer.Option(None, "--memtracebench-out", file_okay=False,
                                           help="Also write each graph as a smartcomment (MemTraceBench-format) file "
                                                "here, with the attributions as its annotations (with --results)."),
    labels: Path = typer.Option(None, "--labels", dir_okay=False,
                                help="A team's labels (`memopt label`); its flagged cases leave the failures "
                                     "(default: labels.jsonl in the trace directory, when there is one)."),
    concurrency: int = options.CONCURRENCY,
    no_cache: bool = options.NO_CACHE,
) -> None:
    """Attribute each failed case to an operation and an error type; print counts by type and by op."""
    from rich.console import Console
    from rich.table import Table

    from memopt.attribution.attribute_run import attribute_run, summarize_attributions
    from memopt.attribution.labels import labels_beside, load_labels
    from memopt.attribution.registry import get_method
    from memopt.attribution.types import save_attributions
    from memopt.core.errors import ConfigError, MemoptError
    from memopt.core.files import check_writable
    from memopt.evaluate.run import RunResult

    try:
        get_method(method)
    except MemoptError as e:
        raise ConfigError(f"--method: {e}") from None
    if trace_dir is not None and trace is not None and trace_dir != trace:
        raise ConfigError(f"TRACE {trace_dir} and --trace {trace}: name the trace directory once.")
    trace = trace_dir if trace_dir is not None else trace
    if trace is None:
        raise ConfigError("name the trace directory: memopt attribute TRACE [--cases FILE] (or --results "
                          "results.json --trace DIR for a `memopt run`).")
    if results is not None and cases is not None:
        raise ConfigError("--results and --cases exclude each other: the results of a `memopt run` say which cases "
                          "failed; a cases file names them for any other trace.")
    for flag, on in (("--verify", verify), ("--masked", masked), ("--memtracebench-out", memtracebench_out)):
        if on and results is None:
            raise ConfigError(f"{flag} needs --results: it replays or rewrites the graphs of a `memopt run`.")
    inputs = [p for p in (results, cases, prior) if p is not None]
    check_writable(out, reads=[*inputs, *(sorted(trace.glob("*.json*")) if trace.is_dir() else [])])
    labelled = load_labels(labels) if labels is not None else load_labels(labels_beside(trace), missing_ok=True)
    judge, workers = _judge(judge_lm, concurrency, cache=not no_cache)
    run = RunResult.load(results) if results is not None else None
    suspect = _judge_suspect(judge, judge_lm, [(c.question, c.gold) for c in run.cases] if run else [], workers)
    if suspect:
        Console(stderr=True, soft_wrap=True).print(f"warning: {suspect}", highlight=False, markup=False)
    if run is not None:
        found = attribute_run(run, trace, judge, method=method, verify=verify, masked=masked, source=str(results),
                              workers=workers, flagged=labelled.flagged)
        what = run.pipeline
    else:
        from memopt.attribution.attribute_run import attribute_trace
        from memopt.attribution.evidence import EvidenceSettings
        from memopt.attribution.prior import load_prior
        from memopt.lm.embedding import make_embedder

        settings = EvidenceSettings(top_k, make_embedder(embedding_lm))
        found = attribute_trace(trace, judge, cases_file=cases, method=method,
                                prior=load_prior(prior) if prior is not None else None, gold_evidence=not retrieve,
                                settings=settings, workers=workers, flagged=labelled.flagged)
        what = str(trace)
    save_attributions(found, out)
    summary = summarize_attributions(found)
    console = Console(soft_wrap=True)
    table = Table(title=f"{summary['n']} failed cases of {what} · {method}"
                  + (" · simulated judge" if judge.simulated else ""))
    table.add_column("error type")
    table.add_column("n", justify="right")
    table.add_column("operation")
    table.add_column("n", justify="right")
    types, ops = list(summary["by_error_type"].items()), list(summary["by_operation"].items())
    for i in range(max(len(types), len(ops))):
        t, o = types[i] if i < len(types) else ("", ""), ops[i] if i < len(ops) else ("", "")
        table.add_row(str(t[0]), str(t[1]), str(o[0]), str(o[1]))
    console.print(table)
    retrieved = sum(a.evidence == "retrieved" for a in found)
    extra = f", verified {summary['verified']:.0%}" if summary["verified"] is not None else ""
    extra += f"; evidence retrieved for {retrieved} of {len(found)}" if retrieved else ""
    extra += f"; {summary['behind']} answer-op faults behind them" if masked else ""
    if labelled.flagged:
        extra += (f"; {len(labelled.flagged)} case(s) flagged in {labelled.path} left out (not memory failures)")
    console.print(f"{summary['judge_calls_per_case']} judge calls per case{extra} → {out}", highlight=False)
    if memtracebench_out is not None:
        written = _write_memtracebench(trace, found, memtracebench_out)
        console.print(f"{written} smartcomment graphs with their annotations → {memtracebench_out}/", highlight=False)


def _write_memtracebench(trace: Path, found: list, out: Path) -> int:
    """Write every graph of the run as a smartcomment file (same file name) annotated with its attributions."""
    from memopt.attribution.attribute_run import graph_files
    from memopt.trace.io import load_graph
    from memopt.trace.smartcomment import require_smartcomment, save_memtrace

    require_smartcomment()
    blamed = {a.case_id: (a.error_type, a.op_id) for a in found if not a.masked_by}  # first faults
    files = graph_files(trace)
    for path in files:
        G = load_graph(path)
        cases = {c["case_id"] for c in G.graph.get("cases", [])}
        save_memtrace(G, out / path.name.removesuffix(".gz"), {k: v for k, v in blamed.items() if k in cases})
    return len(files)


def _judge_suspect(judge: Any, spec: str, cases: list[tuple[str, str]], workers: int) -> str | None:
    """What is wrong with a judge that fails the check on clear-cut answers (`memopt.judge.check`), or None."""
    from memopt.judge.check import check_on_cases

    result = check_on_cases(judge.correct, cases, workers=workers)
    if result.passed or all(v is None for v in result.verdicts):  # never heard: the attribution's calls say why
        return None
    return (f"the judge {spec!r} failed a check on clear-cut answers: {result.summary()}; {result.behaviour()}. "
            "Check --judge-lm (the model name, its endpoint, a model able to grade answers) before trusting these "
            "attributions")


def _judge(spec: str, concurrency: int | None, *, cache: bool) -> tuple:
    """The judge for a spec, and how many cases to attribute at once (the judge LM's concurrency)."""
    from memopt.judge.judges import make_judge, named_judge
    from memopt.lm.pool import LMSlots, role_concurrency

    if named_judge(spec):
        return make_judge(spec), concurrency or 1
    specs = options.lm_list([spec], option="--judge-lm")
    limit = role_concurrency(concurrency, {"judge": specs})["judge"]
    return make_judge(specs, callbacks=[LMSlots(limit, "--concurrency")], cache=cache), limit
