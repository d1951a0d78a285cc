"""The production path measured: attribution from a trace and a cases file alone, its accuracy and its cost.

- `score_cases`: methods run through `memopt.attribution.attribute_run.attribute_trace` on a trace directory
  (e.g. MemTraceBench-format graphs stripped of annotations and evidence ids) with only a cases file, scored
  against the labels of the annotated graphs (matched by graph file and question) with MemTraceBench's metrics.
- `bench_scale`: cases per second and peak memory of `memopt attribute TRACE --cases FILE --retrieve` at several
  sizes of the quickstart's failures (1×, 10×, 100×): the quickstart's system is run once (traced, SimLM), its
  graphs copied N times (each copy its own conversation), its failures written N times as a cases file; each
  size is attributed in a fresh process, which reports the seconds and its peak resident memory.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["score_cases", "bench_scale", "QUICKSTART_DATA"]

QUICKSTART_DATA = "synthetic:conversations=12,sessions=8,seed=0"


def score_cases(labelled: str | Path, trace_dir: str | Path, cases_file: str | Path,
                methods: list[str] | None = None) -> list[dict[str, Any]]:
    """Per method: type and op accuracy of attributions made from ``trace_dir`` and ``cases_file`` alone against
    the annotations of the graphs in ``labelled`` (same file names)."""
    from memopt.attribution.attribute_run import attribute_trace
    from memopt.attribution.cases import load_cases
    from memopt.bench.attribution import scored_methods
    from memopt.judge.judges import LexicalJudge
    from memopt.trace.memtracebench import load_memtrace

    labels = {}
    for path in sorted(Path(labelled).glob("*.json")):
        for a in load_memtrace(path)[1]:
            if a.memory_error:
                labels[(path.name, " ".join(a.query.split()))] = (a.final_error_type, a.final_op_id)
    lines = load_cases(cases_file)
    rows = []
    for method in scored_methods(methods, replay=False):
        judge = LexicalJudge()
        found = attribute_trace(trace_dir, judge, cases_file=cases_file, method=method, gold_evidence=False)
        right_type = right_op = scored = 0
        pending = list(found)  # in the lines' order; a line whose question no graph asks was skipped: a miss
        for line in lines:
            attribution = pending[0] if pending and _same_question(line.question, pending[0].question) else None
            if attribution is not None:
                pending.pop(0)
            label = labels.get((line.graph or "", " ".join(line.question.split())))
            if label is None:
                continue
            scored += 1
            right_type += attribution is not None and attribution.error_type == label[0]
            right_op += attribution is not None and attribution.op_id == label[1]
        n = max(1, scored)
        rows.append({"method": method, "evidence": "retrieved (cases file only)", "n": scored,
                     "type_accuracy": round(right_type / n, 3), "op_accuracy": round(right_op / n, 3),
                     "judge_calls_per_case": round(judge.calls / max(1, len(found)), 2)})
    return rows


def _same_question(line: str, asked: str) -> bool:
    """Whether a cases-file question is the one a graph asks (as `memopt.attribution.cases` finds it)."""
    from memopt.core.text import overlap
    from memopt.trace.roles import question_text

    return question_text(line) == question_text(asked) or overlap(line, asked) >= 0.8


_CHILD = """
import json, resource, sys, time
from memopt.attribution.attribute_run import attribute_trace
from memopt.judge.judges import LexicalJudge
started = time.perf_counter()
found = attribute_trace(sys.argv[1], LexicalJudge(), cases_file=sys.argv[2], gold_evidence=False)
seconds = time.perf_counter() - started
print(json.dumps({"cases": len(found), "seconds": seconds,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _scaled(source: Path, results: dict[str, Any], size: int, out: Path) -> tuple[Path, Path]:
    """A trace directory holding ``size`` copies of each graph (conversation ids suffixed) and the cases file of
    every failure of ``results`` in every copy."""
    trace, lines = out / f"trace-{size}x", []
    trace.mkdir(parents=True)
    failed = [c for c in results["cases"] if c.get("correct") is False and not c.get("error")]
    for path in sorted(source.glob("*.json")):
        conversation = path.stem
        text = path.read_text(encoding="utf-8")
        for copy in range(size):
            name = f"{conversation}-c{copy}"
            (trace / f"{name}.json").write_text(text.replace(f'"{conversation}', f'"{name}')
                                                .replace(f":{conversation}:", f":{name}:"), encoding="utf-8")
            lines += [{"question": c["question"], "expected": c["gold"], "prediction": c["prediction"],
                       "graph": f"{name}.json"} for c in failed if c["sample_id"] == conversation]
    cases = out / f"cases-{size}x.jsonl"
    cases.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return trace, cases


def bench_scale(sizes: tuple[int, ...] = (1, 10, 100), *, data: str = QUICKSTART_DATA,
                pipeline: str = "mem0") -> list[dict[str, Any]]:
    """Cases per second and peak memory of attribution from a trace and a cases file, per size (module doc)."""
    from memopt.evaluate.pipeline import run_pipeline

    rows = []
    with tempfile.TemporaryDirectory(prefix="memopt-scale-") as tmp:
        root = Path(tmp)
        result = run_pipeline(pipeline, data, trace_dir=root / "trace", judge_lm="sim")
        results = result.to_dict()
        for size in sizes:
            trace, cases = _scaled(root / "trace", results, size, root)
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-c", _CHILD, str(trace), str(cases)], capture_output=True,
                                  text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"attributing the {size}x trace failed: {done.stderr.strip()[-600:]}")
            child = json.loads(done.stdout.strip().splitlines()[-1])
            rows.append({"size": f"{size}x", "graphs": len(list(trace.glob("*.json"))), "cases": child["cases"],
                         "attribution s": round(child["seconds"], 1),
                         "cases / s": round(child["cases"] / child["seconds"], 1),
                         "peak MB": round(child["peak_mb"]), "process s": round(time.perf_counter() - started, 1)})
    return rows
