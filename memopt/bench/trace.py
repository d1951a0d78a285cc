"""Cost of tracing: run time with and without the tracer, and the size of a very long graph.

`bench_trace_overhead` runs one pipeline over a synthetic set with SimLM, untraced and traced
(ingestion cache cleared before each run, the two interleaved, median of ``repeats``), and reports
the ratio. `bench_big_graph` traces one synthetic conversation of ``sessions`` sessions in a child
process and reports build, save and load seconds, graph size, and the child's peak memory.
`bench_mlflow_traces` times round 1 of an optimize experiment with each ``mlflow.traces`` mode
(``traces``) and reports traces and spans logged, the round's median wall time (``round_s``), its
``ratio`` to the first mode's, and the seconds the round spent writing traces (``write_s``, the
``traces.seconds`` metric) as a share of the first mode's round (``write_share``).
"""

from __future__ import annotations

import multiprocessing
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_trace_overhead", "bench_big_graph", "bench_mlflow_traces"]


def bench_trace_overhead(data: str = "synthetic:conversations=20,sessions=8,seed=0", pipeline: str = "mem0",
                         repeats: int = 3, latency_ms: float = 0.0) -> dict[str, Any]:
    """Median wall seconds untraced and traced, and their ratio (SimLM answering after ``latency_ms``)."""
    import dspy

    from memopt.data.source import load_data
    from memopt.evaluate.run import evaluate
    from memopt.simlm import SimEngine
    from memopt.systems import make_system
    from memopt.systems.base import clear_ingest_cache
    from memopt.trace import trace

    _, conversations = load_data(data)
    lm = dspy.LM("sim/memopt", engine=SimEngine(seed=0, latency=latency_ms / 1000), cache=False)
    plain, traced = [], []
    for _ in range(repeats):
        clear_ingest_cache()
        start = time.perf_counter()
        evaluate(make_system(pipeline), conversations, lm=lm)
        plain.append(time.perf_counter() - start)
        clear_ingest_cache()
        system = make_system(pipeline)
        start = time.perf_counter()
        with dspy.context(lm=lm), trace(system) as tracer:
            evaluate(system, conversations, lm=lm)
        traced.append(time.perf_counter() - start)
    nodes = sum(G.number_of_nodes() for G in tracer.graphs.values())
    return {"pipeline": pipeline, "data": data, "lm_latency_ms": latency_ms,
            "untraced_s": round(statistics.median(plain), 3),
            "traced_s": round(statistics.median(traced), 3),
            "ratio": round(statistics.median(traced) / statistics.median(plain), 3), "graph_nodes": nodes}


def _big_graph(sessions: int, pipeline: str, out: Any) -> None:
    """In the child process: put the row of `_big_graph_row` on ``out``, or ``{"error": ...}`` when it fails."""
    from memopt.core.errors import one_line

    try:
        row = _big_graph_row(sessions, pipeline)
    except Exception as e:  # the parent raises it: the child prints no traceback and never leaves it waiting
        out.put({"error": one_line(e), "kind": type(e).__name__})
        return
    out.put(row)


def _big_graph_row(sessions: int, pipeline: str) -> dict[str, Any]:
    """Build, save and load the graph of one ``sessions``-session conversation: its size and seconds."""
    import dspy

    from memopt.data.synth import SynthSpec, synthetic_conversations
    from memopt.lm.build import make_lm
    from memopt.systems import make_system
    from memopt.trace import load_graph, save_graph, trace

    [conversation] = synthetic_conversations(SynthSpec(conversations=1, sessions=sessions, seed=0))
    system = make_system(pipeline)
    start = time.perf_counter()
    with dspy.context(lm=make_lm("sim")), trace(system) as tracer:
        system.ingest(conversation)
        for case in conversation.cases:
            system.answer_case(case)
    built = time.perf_counter() - start
    G = tracer.graph
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.json"
        start = time.perf_counter()
        save_graph(G, path)
        saved = time.perf_counter() - start
        start = time.perf_counter()
        load_graph(path)
        loaded = time.perf_counter() - start
        size = path.stat().st_size
    return {"pipeline": pipeline, "sessions": sessions, "turns": len(conversation.turns),
            "nodes": G.number_of_nodes(), "edges": G.number_of_edges(), "build_s": round(built, 2),
            "save_s": round(saved, 2), "load_s": round(loaded, 2), "json_mb": round(size / 2**20, 1)}


def bench_big_graph(sessions: int = 1000, pipeline: str = "mem0") -> dict[str, Any]:
    """Build, save and load the graph of one long conversation; peak memory of the process doing it."""
    from memopt.core import errors

    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    child = ctx.Process(target=_big_graph, args=(sessions, pipeline, queue))
    child.start()
    try:
        row = _result_of(child, queue)
    finally:
        if child.is_alive():  # interrupted, or it failed: do not leave it running
            child.terminate()
        child.join()
    if "error" in row:
        kind = getattr(errors, row["kind"], None)
        if isinstance(kind, type) and issubclass(kind, errors.MemoptError):
            raise kind(row["error"])
        raise errors.MemoptError(f"the {sessions}-session {pipeline} graph could not be built: {row['error']}")
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    return row


def _result_of(child: Any, queue: Any) -> dict[str, Any]:
    """What the child put on ``queue``; a `MemoptError` when it ended without putting anything (no endless wait)."""
    import queue as queues

    from memopt.core.errors import MemoptError

    while True:
        try:
            return queue.get(timeout=1.0)
        except queues.Empty:
            if child.is_alive():
                continue
        try:  # it has ended: what it put before ending is readable now
            return queue.get(timeout=1.0)
        except queues.Empty:
            raise MemoptError(f"the process building the long graph ended (exit code {child.exitcode}) without a "
                              "result; rerun with fewer --sessions if it ran out of memory.") from None


def _round_one(experiment: str | Path, mode: str) -> tuple[float, dict[str, float]]:
    """Wall seconds of round 1 (between the ends of rounds 0 and 1) and that round's ``traces.*`` metrics."""
    import mlflow

    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import run_experiment
    from memopt.systems.base import clear_ingest_cache
    from memopt.tracking import Tracker

    with tempfile.TemporaryDirectory(prefix="memopt-bench-") as tmp:
        uri = f"sqlite:///{tmp}/mlflow.db"
        exp = load_experiment(experiment, {"rounds": 1, "mlflow.traces": mode, "mlflow.tracking_uri": uri})
        ended: list[float] = []
        clear_ingest_cache()
        summary = run_experiment(exp, tracker=Tracker(uri, exp.mlflow.experiment),
                                 on_round=lambda _: ended.append(time.perf_counter()))
        client = mlflow.MlflowClient(uri)
        [run] = client.search_runs([client.get_run(summary["run_id"]).info.experiment_id],
                                   filter_string="tags.`memopt.round` = '1'")
        metrics = {k.removeprefix("traces."): v for k, v in run.data.metrics.items() if k.startswith("traces.")}
    return ended[1] - ended[0], metrics


def bench_mlflow_traces(experiment: str | Path = "experiments/quickstart.yaml",
                        modes: tuple[str, ...] = ("none", "sample"), repeats: int = 3) -> list[dict[str, Any]]:
    """Round 1 of an experiment per ``mlflow.traces`` mode (fresh sqlite store each run, modes interleaved)."""
    rounds: dict[str, list[float]] = {m: [] for m in modes}
    traced: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
    for _ in range(repeats):
        for mode in modes:
            seconds, metrics = _round_one(experiment, mode)
            rounds[mode].append(seconds)
            traced[mode].append(metrics)
    base = statistics.median(rounds[modes[0]])
    rows = []
    for m in modes:
        median = statistics.median(rounds[m])
        writing = statistics.median(t.get("seconds", 0.0) for t in traced[m])
        rows.append({"traces": m, "logged": int(traced[m][-1].get("logged", 0)),
                     "spans": int(traced[m][-1].get("spans", 0)), "round_s": round(median, 3),
                     "ratio": round(median / base, 3), "write_s": round(writing, 3),
                     "write_share": round(writing / base, 3)})
    return rows
