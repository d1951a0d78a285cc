"""memtrace asks the judge only what the method needs: on a long-context pipeline, no call per turn of the
conversation a truncation read, and none for a made-up memory where there is no store to make one up in."""

from __future__ import annotations

import pytest

from memopt.attribution.fault_bench import build_bench
from memopt.attribution.memtrace import memtrace
from memopt.attribution.probe import Probe
from memopt.judge.judges import LexicalJudge
from memopt.trace import load_graph


@pytest.fixture(scope="module")
def long_context_bench(tmp_path_factory):
    """The fault bench's long_context cases on a small synthetic set, each on its graph."""
    out = tmp_path_factory.mktemp("bench")
    cases, _ = build_bench(["long_context"], "synthetic:conversations=1,sessions=4,seed=7,hard_percent=0", out,
                           LexicalJudge())
    graphs = {c.graph: load_graph(out / c.graph) for c in cases}
    return [c.failed_case(graphs[c.graph]) for c in cases], cases


def test_memtrace_on_long_context_asks_one_call_per_piece_at_most(long_context_bench):
    failed, labels = long_context_bench
    assert {c.error_type for c in labels} == {"RetrievalError", "ResponseError"}
    judge = LexicalJudge()
    reported = 0
    for case, label in zip(failed, labels, strict=True):
        found = memtrace(case, judge)
        assert (found.error_type, found.op_id) == (label.error_type, label.op_id)
        needed = len(Probe(case, LexicalJudge()).pieces)
        if label.error_type == "ResponseError":  # the context holds the evidence turns verbatim: nothing to judge
            assert found.judge_calls == 0, (case.case_id, found.judge_calls)
        else:  # the context is judged once per piece; the turns the truncation read are not
            assert 1 <= found.judge_calls <= needed, (case.case_id, found.judge_calls, needed)
        reported += found.judge_calls
    assert judge.calls == reported  # every call the judge answered is counted in the attributions
    assert reported / len(failed) <= 0.5


def test_every_judge_call_of_the_made_up_memory_check_is_counted():
    """The check reads the turns a made-up fact was written from: each of those judge calls is reported."""
    from memopt.attribution.case import FailedCase
    from tests.attribution.test_decisive import PHOTOGRAPHY, _dated_facts

    G = _dated_facts("I love old Italian movies, especially on rainy days.").G
    judge = LexicalJudge()
    found = memtrace(FailedCase(G, "gina:q1", PHOTOGRAPHY, "the Wednesday before 5 June 2023", ("D2:1",)), judge)
    assert (found.error_type, found.op_id) == ("ExtractionError", "facts:gina:S1")
    assert found.judge_calls == judge.calls >= 2
