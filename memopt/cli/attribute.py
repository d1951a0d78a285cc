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
                               help="A registered attribution method (`memopt plugins` lists them; "
                                    "plug-ins included)."),
    verify: bool = typer.Option(False, "--verify", help="Confirm each blamed op by replay with an oracle correction."),
    masked: bool = typer.Option(False, "--masked",
                                help="Also blame the answer op behind each upstream fault when, replayed with the "
                                     "evidence in its context, it still answers wrong (an extra line with "
                                     "details.masked_by; one task call on the LM the graph recorded and one judge "
                                     "call per such failure)."),
    judge_lm: str = typer.Option("sim", "--judge-lm", envvar="MEMOPT_JUDGE_LM",
                                 help="Judge: an LM spec ('sim', 'openai/...'), or a registered judge: 'lexical' "
                                      "(SimLM's rules, direct), plug-ins (`memopt plugins --kind judges`)."),
    out: Path = typer.Option(Path("attributions.jsonl"), "--out", "-o", help="Where to write the attributions."),
    memtracebench_out: Path = typer.Option(None, "--memtracebench-out", file_okay=False,
                                           help="Also write each graph as a smartcomment (MemTraceBench-format) file "
                                                "here, with the attributions as its annotations."),
    labels: Path = typer.Option(None, "--labels", dir_okay=False,
                                help="A team's labels (`memopt label`); its flagged cases leave the failures "
                                     "(default: labels.jsonl in the --trace directory, when there is one)."),
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
    check_writable(out, reads=[results, *(sorted(trace.glob("*.json")) if trace.is_dir() else [])])
    run = RunResult.load(results)
    labelled = load_labels(labels) if labels is not None else load_labels(labels_beside(trace), missing_ok=True)
    judge, workers = _judge(judge_lm, concurrency, cache=not no_cache)
    found = attribute_run(run, trace, judge, method=method, verify=verify, masked=masked, source=str(results),
                          workers=workers, flagged=labelled.flagged)
    save_attributions(found, out)
    summary = summarize_attributions(found)
    console = Console(soft_wrap=True)
    table = Table(title=f"{summary['n']} failed cases of {run.pipeline} · {method}"
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
    extra = f", verified {summary['verified']:.0%}" if summary["verified"] is not None else ""
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


def _judge(spec: str, concurrency: int | None, *, cache: bool) -> tuple:
    """The judge for a spec, and how many cases to attribute at once (the judge LM's concurrency)."""
    from memopt.judge.judges import make_judge, named_judge
    from memopt.lm.pool import LMSlots, role_concurrency

    if named_judge(spec):
        return make_judge(spec), concurrency or 1
    specs = options.lm_list([spec], option="--judge-lm")
    limit = role_concurrency(concurrency, {"judge": specs})["judge"]
    return make_judge(specs, callbacks=[LMSlots(limit, "--concurrency")], cache=cache), limit
