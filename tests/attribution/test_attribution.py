"""memtrace and counterfactual attribution, fault injection, the bench, and `memopt attribute`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memopt.attribution import Attribution, failed_cases, load_attributions, save_attributions
from memopt.attribution.case import Probe
from memopt.attribution.counterfactual import counterfactual, verify
from memopt.attribution.evidence import pseudo_evidence
from memopt.attribution.fault_bench import build_bench, case_view, load_bench, score_bench
from memopt.attribution.inject import effective, injections
from memopt.attribution.memtrace import memtrace
from memopt.evaluate.pipeline import run_pipeline
from memopt.judge.judges import LexicalJudge
from memopt.trace import load_graph, replay, validate
from memopt.trace.graph import ops

DATA = "synthetic:conversations=2,sessions=6,seed=11"


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    """name -> (results by case id, graphs) for mem0 and rag on a small synthetic set."""
    out = {}
    for name in ("mem0", "rag", "long_context", "evermemos"):
        directory = tmp_path_factory.mktemp(name)
        result = run_pipeline(name, DATA, trace_dir=directory, judge_lm="sim")
        out[name] = ({c.case_id: c.to_dict() for c in result.cases},
                     [load_graph(p) for p in sorted(directory.glob("*.json"))])
    return out


def _correct_case(results, G):
    judge = LexicalJudge()
    for case in G.graph["cases"]:
        result = results[case["case_id"]]
        if result["correct"] and case["category"] == 4:
            view = case_view(G, case, result["prediction"])
            if view.stored() and any(Probe(view, judge).holds(u) for u in view.stored()):
                return case, view
    raise AssertionError("no grounded correct single-hop case")


@pytest.mark.parametrize(("fault", "error_type", "operation"), [
    ("drop_evidence", "ExtractionError", "extract"),
    ("overwrite_update", "UpdateError", "update"),
    ("delete_unit", "DeletionError", "update"),
    ("drop_retrieved", "RetrievalError", "retrieve"),
    ("replace_answer", "ResponseError", "answer"),
])
def test_memtrace_finds_each_injected_fault_in_mem0(traced, fault, error_type, operation):
    results, graphs = traced["mem0"]
    judge = LexicalJudge()
    found = 0
    for G in graphs:
        for case in G.graph["cases"]:
            result = results[case["case_id"]]
            if not result["correct"]:
                continue
            view = case_view(G, case, result["prediction"])
            injection = next((i for i in injections(view, Probe(view, judge)) if i.fault == fault), None)
            if injection is None:
                continue
            replayed = replay(G, injection.overrides, cases=[view.key])
            answer = replayed.answers[view.key]
            faulted = case_view(replayed.graph, case, answer)
            if judge.correct(view.question, view.gold, answer) or not effective(injection, faulted,
                                                                                Probe(faulted, judge)):
                continue  # as the bench does: a fault that left the context holding the information is not clean
            assert validate(replayed.graph) == []
            blamed = memtrace(faulted, judge)
            assert (blamed.error_type, blamed.operation) == (error_type, operation), (case["question"], blamed)
            assert blamed.op_id == injection.op_id
            found += 1
            break
        if found:
            break
    assert found, f"no case took the {fault} fault"


def test_memtrace_and_counterfactual_agree_on_natural_mem0_failures(traced):
    results, graphs = traced["mem0"]
    judge = LexicalJudge()
    compared = agree = 0
    for G in graphs:
        for case in failed_cases(G, results)[:12]:
            oracle = counterfactual(case, judge)
            if not oracle.details["clean"]:
                continue
            ours = memtrace(case, judge)
            compared += 1
            agree += (ours.error_type, ours.op_id) == (oracle.error_type, oracle.op_id)
            assert oracle.verified is True
    assert compared >= 8 and agree == compared


def test_memtrace_is_cheap_and_verify_replays(traced):
    results, graphs = traced["mem0"]
    judge = LexicalJudge()
    cases = failed_cases(graphs[0], results)
    blamed = [memtrace(c, judge) for c in cases]
    assert all(a.judge_calls <= 6 for a in blamed)
    extraction = next(a for a, c in zip(blamed, cases, strict=True) if a.error_type == "ExtractionError")
    case = cases[blamed.index(extraction)]
    checked = verify(case, extraction, judge)
    assert checked.verified in (True, False) and checked.judge_calls > extraction.judge_calls
    answer_only = Attribution(case.case_id, "ResponseError", case.answer_op, "answer")
    assert verify(case, answer_only, judge).verified is True  # answering with the gold always rescues


def test_pseudo_evidence_finds_the_evidence_turn(traced):
    results, graphs = traced["rag"]
    G = graphs[0]
    hits = 0
    cases = [c for c in G.graph["cases"] if c["category"] == 4][:10]
    for case in cases:
        hits += set(pseudo_evidence(G, case["question"], case["gold"])) >= set(case["evidence"][:1])
    assert hits >= 0.7 * len(cases)


def test_attributions_round_trip_as_json_lines(tmp_path):
    items = [Attribution("c:q1", "UpdateError", "update:c:S2", "update", ("memory:m1@1",), "overwrote", 0.9, 3, True)]
    assert load_attributions(save_attributions(items, tmp_path / "a.jsonl")) == items
    with pytest.raises(ValueError, match="not one of"):
        Attribution("c:q1", "OopsError", "x", "x")


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_bench_builds_labelled_cases_and_scores_methods(tmp_path):
    judge = LexicalJudge()
    cases, path = build_bench(["mem0", "long_context"], "synthetic:conversations=1,sessions=6,seed=11", tmp_path,
                              judge)
    assert cases and load_bench(path) == cases
    kinds = {(c.pipeline, c.error_type) for c in cases}
    assert {("mem0", "ExtractionError"), ("mem0", "RetrievalError"), ("mem0", "ResponseError"),
            ("long_context", "RetrievalError"), ("long_context", "ResponseError")} <= kinds
    assert {c.source for c in cases} == {"injected", "natural"}
    rows = score_bench(cases, ["memtrace", "blame_response"], LexicalJudge, tmp_path)
    by = {(r["pipeline"], r["method"]): r for r in rows}
    assert by[("mem0", "memtrace")]["op_accuracy"] >= 0.9
    assert by[("mem0", "blame_response")]["op_accuracy"] < by[("mem0", "memtrace")]["op_accuracy"]
    assert all(r["n"] == sum(c.pipeline == r["pipeline"] for c in cases) for r in rows)


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_attribute_cli(traced, tmp_path):
    trace_dir = tmp_path / "graphs"
    result = run_pipeline("mem0", DATA, trace_dir=trace_dir, judge_lm="sim")
    result.save(tmp_path / "results.json")
    out = tmp_path / "attributions.jsonl"
    done = subprocess.run([sys.executable, "-m", "memopt", "attribute", "--results", str(tmp_path / "results.json"),
                           "--trace", str(trace_dir), "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "ExtractionError" in done.stdout and "judge calls per case" in done.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    failed = [c for c in result.cases if c.correct is False]
    assert len(rows) == len(failed) and {r["method"] for r in rows} == {"memtrace"}
    bad = subprocess.run([sys.executable, "-m", "memopt", "attribute", "--results", str(tmp_path / "results.json"),
                          "--trace", str(tmp_path / "nope")], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no such trace directory" in bad.stderr


def test_every_pipeline_gets_its_failures_attributed(traced):
    judge = LexicalJudge()
    for name, (results, graphs) in traced.items():
        blamed = [memtrace(c, judge) for G in graphs for c in failed_cases(G, results)]
        assert blamed, name
        operations = {a.operation for a in blamed}
        assert operations <= {op for G in graphs for op in {G.nodes[n]["operation"] for n in ops(G)}}
