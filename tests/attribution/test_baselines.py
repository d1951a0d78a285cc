"""The baseline attribution methods, the fault-locating judge, and the method registry.

Graphs are traced Mem0 runs on synthetic conversations (6 sessions: small; 40 sessions: long). Known
faults are made by replaying a correctly answered case with one op's output changed: the evidence
fact dropped from its extract op (ExtractionError there), or the unit holding the information
deleted by a later update op (DeletionError there).
"""

from __future__ import annotations

import copy
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

from memopt.attribution import (
    METHODS,
    FailedCase,
    all_at_once,
    attribute,
    binary_search,
    blame_response,
    failed_cases,
    step_by_step,
)
from memopt.attribution.baselines import case_ops, serialize_trace
from memopt.attribution.memtrace import memtrace
from memopt.core.errors import ConfigError
from memopt.data.synth import SynthSpec
from memopt.evaluate.pipeline import run_pipeline
from memopt.judge.judges import LexicalJudge, LMJudge
from memopt.judge.rules import DATA_CLOSE, DATA_OPEN, LOCATE_WINDOW, judge_locate
from memopt.lm.signatures import STANDARD_SIGNATURES, LocateFault
from memopt.trace import load_graph, replay

_HEADER = re.compile(r"^\[(?P<op>[^\]]+)\] (?P<operation>\S+) \((?P<stage>[a-z]+)\)$", re.MULTILINE)


@dataclass
class Run:
    """One traced conversation, its results and its failed cases."""

    G: nx.DiGraph
    results: dict[str, dict]
    failed: list[FailedCase]

    @property
    def answerable(self) -> list[FailedCase]:
        return [c for c in self.failed if not c.unanswerable]


def _run(tmp: Path, sessions: int) -> Run:
    res = run_pipeline("mem0", SynthSpec(conversations=1, sessions=sessions, seed=11).describe(), trace_dir=tmp)
    G = load_graph(tmp / f"{res.cases[0].sample_id}.json")
    results = {c.case_id: c.to_dict() for c in res.cases}
    return Run(G, results, failed_cases(G, results))


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Run:
    return _run(tmp_path_factory.mktemp("small"), 6)


@pytest.fixture(scope="module")
def long(tmp_path_factory) -> Run:
    return _run(tmp_path_factory.mktemp("long"), 40)


def _case(G: nx.DiGraph, case: dict, prediction: str = "") -> FailedCase:
    return FailedCase(G, case["case_id"], case["question"], case["gold"], tuple(case["evidence"]), prediction,
                      int(case.get("category") or 0))


def _broken(run: Run, overrides: dict, case: dict) -> FailedCase | None:
    """The case replayed with ``overrides``, when that makes its answer wrong."""
    key = case["case_id"].split(":")[-1]
    result = replay(run.G, overrides, cases=[key])
    if LexicalJudge().correct(case["question"], case["gold"], result.answers[key]):
        return None
    return _case(result.graph, case, result.answers[key])


def _correct(run: Run) -> list[dict]:
    return [c for c in run.G.graph["cases"] if run.results[c["case_id"]].get("correct")]


@pytest.fixture(scope="module")
def dropped(small: Run) -> tuple[FailedCase, str]:
    """A failure whose evidence fact was never extracted, and the extract op that dropped it."""
    judge = LexicalJudge()
    for case in _correct(small):
        view = _case(small.G, case)
        for op in (o for t in view.evidence_turns for o in small.G.successors(t)):
            if small.G.nodes[op]["operation"] != "extract":
                continue
            facts = small.G.nodes[op]["output"]["facts"]
            kept = [f for f in facts if not judge.contains(view.information, f)]
            if len(kept) < len(facts) and (failed := _broken(small, {op: {"facts": kept}}, case)):
                return failed, op
    pytest.fail("no correctly answered case whose evidence fact could be dropped")


@pytest.fixture(scope="module")
def deleted(small: Run) -> tuple[FailedCase, str]:
    """A failure whose unit holding the information was deleted by a later update op, and that op."""
    judge = LexicalJudge()
    G = small.G
    for case in _correct(small):
        view = _case(G, case)
        for unit in (n for n, d in G.nodes(data=True) if d.get("kind") == "memory" and not d.get("deleted")):
            text = G.nodes[unit]["value"]
            if not judge.contains(view.information, text):
                continue
            for op in (o for o in view.ops_before(view.answer_op) if G.nodes[o]["operation"] == "update"):
                shown = json.loads(G.nodes[op]["inputs"].get("existing_memories") or "[]")
                local = next((m["id"] for m in shown if m["text"] == text), None)
                if local is None or G.nodes[op]["start"] < G.nodes[unit]["created"]:
                    continue
                events = [e for e in copy.deepcopy(G.nodes[op]["output"]["memory"]) if e["id"] != local]
                events.append({"id": local, "text": text, "event": "DELETE", "old_memory": None})
                if failed := _broken(small, {op: {"memory": events}}, case):
                    return failed, op
    pytest.fail("no correctly answered case whose memory unit could be deleted")


@pytest.fixture(scope="module")
def unretrieved(small: Run) -> tuple[FailedCase, str]:
    """A failure whose retrieve op left the unit holding the information out of the context, and that op."""
    judge = LexicalJudge()
    for case in _correct(small):
        view = _case(small.G, case)
        hits = small.G.nodes[view.context_op]["output"]
        kept = [h for h in hits if not judge.contains(view.information, h["text"])]
        if len(kept) < len(hits) and (failed := _broken(small, {view.context_op: kept}, case)):
            return failed, view.context_op
    pytest.fail("no correctly answered case whose retrieved unit could be dropped")


# --- the ops walked and the serialized trace -------------------------------------------------------------------


def test_case_ops_are_the_ingestion_ops_and_the_cases_own_query_ops(small):
    case = small.answerable[-1]  # asked after the other questions, whose ops are not its own
    ops = case_ops(case)
    ingestion = {n for n, d in small.G.nodes(data=True) if d.get("operation") in ("extract", "update")}
    assert ops[-1] == case.answer_op
    assert set(ops) == ingestion | {case.context_op, case.answer_op}
    starts = [small.G.nodes[op]["start"] for op in ops]
    assert starts == sorted(starts)


def test_the_serialized_trace_has_one_block_per_op_in_time_order(small, long):
    case = small.answerable[0]
    trace = serialize_trace(case)
    blocks = trace.split("\n\n")
    assert [m["op"] for m in _HEADER.finditer(trace)] == case_ops(case)
    assert all(b.splitlines()[1].startswith("reads: ") and b.splitlines()[2].startswith("writes: ") for b in blocks)
    assert {m["stage"] for m in _HEADER.finditer(trace)} == {"extraction", "update", "retrieval", "response"}
    assert len(trace) < LOCATE_WINDOW < len(serialize_trace(long.answerable[0]))


# --- blame_response ----------------------------------------------------------------------------------------------


def test_blame_response_blames_the_answer_op_without_a_judge_call(small, dropped):
    judge = LexicalJudge()
    for case in [*small.failed, dropped[0]]:
        found = blame_response(case, judge)
        assert (found.error_type, found.op_id, found.judge_calls) == ("ResponseError", case.answer_op, 0)
        assert found.method == "blame_response"
    assert judge.calls == 0


# --- step_by_step ------------------------------------------------------------------------------------------------


def test_step_by_step_blames_the_extract_op_that_dropped_the_evidence(dropped):
    case, op = dropped
    judge = LexicalJudge()
    found = step_by_step(case, judge)
    assert (found.error_type, found.op_id, found.method) == ("ExtractionError", op, "step_by_step")
    assert found.judge_calls == judge.calls > 0
    assert found.evidence_path[0] == op and found.seconds > 0


def test_step_by_step_labels_a_delete_of_the_holding_unit_a_deletion_error(deleted):
    case, op = deleted
    found = step_by_step(case, LexicalJudge())
    assert (found.error_type, found.op_id) == ("DeletionError", op)


def test_every_searching_baseline_blames_a_retrieve_op_that_missed_a_stored_unit(unretrieved):
    case, op = unretrieved
    for method in (step_by_step, binary_search, all_at_once):
        found = method(case, LexicalJudge())
        assert (found.error_type, found.op_id) == ("RetrievalError", op), method.__name__


def test_step_by_step_pays_for_long_graphs_where_memtrace_does_not(small, long):
    def mean_calls(method, cases):
        judge = LexicalJudge()
        calls = [method(case, judge).judge_calls for case in cases]
        assert sum(calls) == judge.calls
        return sum(calls) / len(calls)

    assert mean_calls(step_by_step, long.answerable) > 2 * mean_calls(step_by_step, small.answerable)
    assert mean_calls(step_by_step, long.answerable) > 5 * mean_calls(memtrace, long.answerable)


def test_unanswerable_questions_are_response_errors_without_a_judge_call(small):
    unanswerable = [c for c in small.failed if c.unanswerable]
    assert unanswerable
    for method in (step_by_step, binary_search, all_at_once):
        judge = LexicalJudge()
        found = method(unanswerable[0], judge)
        assert (found.error_type, found.op_id, judge.calls) == ("ResponseError", unanswerable[0].answer_op, 0)


# --- binary_search -----------------------------------------------------------------------------------------------


def test_binary_search_finds_the_dropped_evidence_in_logarithmic_calls(dropped):
    case, op = dropped
    found = binary_search(case, LexicalJudge())
    assert (found.error_type, found.op_id) == ("ExtractionError", op)
    assert found.judge_calls < step_by_step(case, LexicalJudge()).judge_calls


def test_binary_search_probes_at_most_log2_of_the_ops(small, long):
    for case in [*small.answerable, *long.answerable]:
        judge = LexicalJudge()
        found = binary_search(case, judge)
        assert found.judge_calls == judge.calls <= math.ceil(math.log2(len(case_ops(case)))) + 2
    assert max(binary_search(c, LexicalJudge()).judge_calls for c in long.answerable) >= 3


# --- all_at_once -------------------------------------------------------------------------------------------------


def test_all_at_once_finds_the_fault_of_a_small_graph_in_one_call(dropped, deleted):
    for case, op, error in ((*dropped, "ExtractionError"), (*deleted, "DeletionError")):
        judge = LexicalJudge()
        found = all_at_once(case, judge)
        assert (found.error_type, found.op_id, found.judge_calls, judge.calls) == (error, op, 1, 1)


def test_all_at_once_guesses_when_the_fault_lies_beyond_its_window(long):
    beyond = []
    for case in long.answerable:
        trace = serialize_trace(case)
        fault = step_by_step(case, LexicalJudge())
        if trace.index(f"[{fault.op_id}]") > LOCATE_WINDOW:
            beyond.append((case, trace, fault))
    assert beyond
    for case, trace, fault in beyond:
        judge = LexicalJudge()
        found = all_at_once(case, judge)
        assert judge.calls == found.judge_calls == 1
        assert found.op_id != fault.op_id
        assert trace.index(f"[{found.op_id}]") < LOCATE_WINDOW  # a guess among the ops it read


def test_lexical_and_lm_judges_locate_alike(sim_lm, dropped, long):
    lm_judge = LMJudge(sim_lm)
    traces = [(dropped[0], serialize_trace(dropped[0])), *((c, serialize_trace(c)) for c in long.answerable[:2])]
    for case, trace in traces:
        expected = LexicalJudge().locate(case.question, case.information, trace)
        assert lm_judge.locate(case.question, case.information, trace) == expected
    assert lm_judge.calls == len(traces) == len(sim_lm.history)
    system, user = (m["content"] for m in sim_lm.history[-1]["messages"])
    assert DATA_OPEN in user and DATA_CLOSE in user and "never instructions" in system


PEPPER = "Bea adopted a parrot named Pepper"
EXTRACT = f"[extract:c:S1] extract (extraction)\nreads: Bea: I adopted a parrot named Pepper.\nwrites: {PEPPER}"
DROPPED = f"[update:c:S2] update (update)\nreads: {PEPPER} | Bea likes tea\nwrites: Bea likes tea"
KEPT = f"[update:c:S2] update (update)\nreads: {PEPPER} | Bea likes tea\nwrites: {PEPPER} | Bea likes tea"


def _trace(*blocks: str, store: str = "Bea likes tea", context: str = "Bea likes tea") -> str:
    return "\n\n".join([*blocks, f"[retrieve:c:q1] retrieve (retrieval)\nreads: {store}\nwrites: {context}",
                         f"[answer:c:q1] answer (response)\nreads: {context}\nwrites: Not mentioned"])


TRACE = _trace(EXTRACT, f"{DROPPED}\ndeletes: {PEPPER}")


@pytest.mark.parametrize(("trace", "gold", "expected"), [
    (TRACE, "Pepper", ("DeletionError", "update:c:S2")),
    (_trace(EXTRACT, DROPPED), "Pepper", ("UpdateError", "update:c:S2")),
    (_trace(EXTRACT, KEPT, store=PEPPER), "Pepper", ("RetrievalError", "retrieve:c:q1")),
    (_trace(EXTRACT, KEPT, store=PEPPER, context=PEPPER), "Pepper", ("ResponseError", "answer:c:q1")),
    (_trace(EXTRACT, KEPT, store=PEPPER, context=PEPPER), "Toronto", ("ResponseError", "answer:c:q1")),
    (TRACE, "Not mentioned", ("ResponseError", "answer:c:q1")),
])
def test_judge_locate_reads_the_stages(trace, gold, expected):
    found = judge_locate({"question": "What is Bea's parrot called?", "gold_answer": gold, "trace": trace}, frozenset())
    assert (found["error_type"], found["op_id"]) == expected


@pytest.mark.parametrize("n_filler", [5, LOCATE_WINDOW // 1000 + 5])
def test_judge_locate_reads_only_its_window(n_filler):
    filler = [f"[extract:c:F{i}] extract (extraction)\nreads: {'x' * 1000}\nwrites: " for i in range(n_filler)]
    trace = "\n\n".join([*filler, TRACE])
    found = judge_locate({"question": "What is Bea's parrot called?", "gold_answer": "Pepper", "trace": trace},
                         frozenset())
    if len(trace) <= LOCATE_WINDOW:
        assert (found["error_type"], found["op_id"]) == ("DeletionError", "update:c:S2")
        return
    block = filler[int(found["op_id"].removeprefix("extract:c:F"))]
    assert found["error_type"] == "ExtractionError"  # a guess: the last whole block it read
    assert trace.index(block) + len(block) <= LOCATE_WINDOW < trace.index(block) + 2 * (len(block) + 2)


def test_locate_fault_is_a_standard_signature_telling_the_lm_the_trace_is_data():
    assert STANDARD_SIGNATURES["judge_locate"] is LocateFault
    assert set(LocateFault.output_fields) == {"error_type", "op_id"}
    doc = LocateFault.__doc__
    assert "never instructions" in doc and DATA_OPEN in doc
    assert all(label in doc for label in ("ExtractionError", "UpdateError", "DeletionError", "RetrievalError",
                                          "ResponseError"))


# --- the registry ------------------------------------------------------------------------------------------------


def test_the_registry_names_every_method_and_attribute_runs_it(small):
    assert list(METHODS) == ["memtrace", "counterfactual", "all_at_once", "step_by_step", "binary_search",
                             "blame_response"]
    case = small.answerable[0]
    for name in METHODS:
        assert attribute(case, LexicalJudge(), name).method == name
    assert attribute(case, LexicalJudge()).method == "memtrace"


def test_attribute_verifies_by_replay_when_asked(dropped):
    case, op = dropped
    found = attribute(case, LexicalJudge(), "step_by_step", verify=True)
    assert found.op_id == op and found.verified is True
    assert attribute(case, LexicalJudge(), "blame_response").verified is None


def test_an_unknown_method_is_a_config_error_listing_the_methods(small):
    with pytest.raises(ConfigError, match="unknown attribution method 'oracle'") as info:
        attribute(small.failed[0], LexicalJudge(), "oracle")
    assert all(name in str(info.value) for name in METHODS)


def test_a_unit_deleted_in_a_foreign_graph_is_not_among_what_the_op_kept():
    """A smartcomment graph's delete is a new version carrying the old text: the op's view lists it as deleted, not
    as kept, so step_by_step finds the delete."""
    pytest.importorskip("smartcomment")
    from memopt.attribution.baselines import op_view
    from memopt.attribution.evidence import seed_evidence
    from memopt.trace.memtracebench import from_memtrace
    from tests.attribution.test_shapes import GOAL, _coach

    doc, adder = _coach("marker DELETE")
    G, _ = from_memtrace(doc, source="coach.json")
    case = next(c for c in G.graph["cases"] if c["question"] == GOAL)
    evidence, pseudo = seed_evidence(G, GOAL, "a sub-25 minute 5k", ("msg-11",))
    failed = FailedCase(G, case["case_id"], GOAL, "a sub-25 minute 5k", evidence, "", 0, pseudo, case.get("date"))
    op = next(n for n in G if G.nodes[n].get("sc_op_id") == adder and any(
        G.nodes[v].get("deleted") for v in G.successors(n)))
    view = op_view(failed, op)
    assert any("sub-25" in t for t in view.deletes) and not any("sub-25" in t for t in view.writes)
    found = step_by_step(failed, LexicalJudge())
    assert (found.error_type, G.nodes[found.op_id]["sc_op_id"]) == ("DeletionError", adder)
