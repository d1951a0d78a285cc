"""Masked faults: the answer op's own fault behind an upstream one, found by replaying the question with the
evidence in its context (one counted task call and one judge call per probe)."""

from __future__ import annotations

import pytest

from memopt.lm.spec import parse_lm_specs

DATA = "synthetic:conversations=4,sessions=8,seed=0"
COMBINE = " When several memories match the question, combine all of them in the answer."


@pytest.fixture(scope="module")
def run():
    """The seed mem0 system's traced, judged training run on four synthetic conversations, and its attributions."""
    from memopt.attribution.case import failed_cases
    from memopt.attribution.methods import attribute
    from memopt.data.source import load_data
    from memopt.optimize.reflective import ReflectiveOptimizer
    from memopt.optimize.scoring import Scorer
    from memopt.systems import make_system

    _, conversations = load_data(DATA)
    scorer = Scorer(*[parse_lm_specs("sim")] * 3, budget=100_000)
    system = make_system("mem0", top_k=10)
    train = ReflectiveOptimizer(scorer, masked=False)._evaluate(system, conversations)
    by_id = {r.case_id: r.to_dict() for r in train.results}
    cases = [c for G in train.graphs.values() for c in failed_cases(G, by_id)]
    return system, scorer, conversations, [(c, attribute(c, scorer.judge)) for c in cases]


def _list_case(pairs):
    """The first failure blamed upstream whose gold lists three or more items (the seed answer op names one)."""
    return next((c, a) for c, a in pairs if a.operation != "answer" and c.gold.count(",") >= 2)


def test_an_upstream_failure_hides_a_partial_answer_that_the_replay_shows(run):
    from memopt.attribution.masked import masked_fault
    from memopt.feedback.build import build_feedback

    system, scorer, _, pairs = run
    case, first = _list_case(pairs)
    before = scorer.usage_by_meter()
    found = masked_fault(case, first, scorer.judge, lm=scorer.task_lm)
    assert found is not None
    again, blamed = found
    assert (blamed.error_type, blamed.operation, blamed.details["masked_by"]) == ("ResponseError", "answer",
                                                                                   first.op_id)
    assert again.case_id == case.case_id and again.G is not case.G
    context = again.G.nodes[again.context_var]["value"]
    assert all(text in context for text in again.evidence_words)  # the replayed context holds the evidence
    assert again.prediction != case.prediction or again.prediction  # the answer op ran again on it
    after = scorer.usage_by_meter()
    assert after["task"].calls - before["task"].calls == 1  # only the answer op ran again, on the counted LM
    assert after["judge"].calls - before["judge"].calls == 1
    example = build_feedback([found])["answer"].text()
    assert "left out" in example and again.gold.split(",")[0].strip() in example


def test_an_answer_op_that_combines_passes_the_replay(run):
    from memopt.attribution.masked import masked_fault

    system, scorer, _, pairs = run
    case, first = _list_case(pairs)
    answer = case.answer_op
    case.G.graph["instructions"] = {**case.G.graph["instructions"],
                                    "answer": case.G.graph["instructions"]["answer"] + COMBINE}
    try:
        assert masked_fault(case, first, scorer.judge, lm=scorer.task_lm) is None
    finally:
        case.G.graph["instructions"]["answer"] = case.G.graph["instructions"]["answer"].removesuffix(COMBINE)
    assert answer == case.answer_op


def test_no_probe_when_the_answer_op_is_already_blamed_or_the_question_is_unanswerable(run):
    from memopt.attribution.masked import masked_fault

    _, scorer, _, pairs = run
    before = scorer.usage().calls
    for case, first in pairs:
        if first.operation == "answer" or case.unanswerable:
            assert masked_fault(case, first, scorer.judge, lm=scorer.task_lm) is None
    assert scorer.usage().calls == before


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_one_replay_per_conversation_finds_what_one_replay_per_failure_finds(run):
    from memopt.attribution.masked import masked_fault, masked_faults

    _, scorer, _, pairs = run
    one_by_one = {c.case_id: found for c, a in pairs if (found := masked_fault(c, a, scorer.judge)) is not None}
    before = scorer.usage_by_meter()["task"].calls
    together = masked_faults(pairs, scorer.judge, lm=scorer.task_lm)
    probed = sum(a.operation != "answer" and not c.unanswerable for c, a in pairs)
    assert scorer.usage_by_meter()["task"].calls - before == probed  # one answer call per probed failure, no more
    assert together and set(together) == set(one_by_one)
    for case_id, (again, blamed) in together.items():
        alone, alone_blamed = one_by_one[case_id]
        assert again.prediction == alone.prediction and blamed.reason == alone_blamed.reason
        assert again.G.nodes[again.context_var]["value"] == alone.G.nodes[alone.context_var]["value"]
    assert len({id(again.G) for again, _ in together.values()}) <= len({id(c.G) for c, _ in pairs})


def test_a_round_blames_masked_faults_and_replays_them_for_free(run):
    from memopt.optimize.reflective import ReflectiveOptimizer

    system, scorer, conversations, pairs = run
    optimizer = ReflectiveOptimizer(scorer, reuse_train=False)
    blamed, _, spent = optimizer._attribute(optimizer._evaluate(system, conversations))
    masked = [(c, a) for c, a in blamed if a.details.get("masked_by")]
    assert spent["masked"] == len(masked) > 0
    assert len(blamed) == spent["attributed"] + len(masked)
    assert {a.case_id for _, a in masked} <= {c.case_id for c, a in pairs if a.operation != "answer"}
    train = optimizer._evaluate(system, conversations)  # the same prompts again: byte-identical cases
    before = scorer.usage().calls
    again, _, spent = optimizer._attribute(train)
    assert scorer.usage().calls == before  # replayed: no judge call, no replay of the answer op
    assert spent["attributed"] == 0 and spent["masked"] == len(masked)
    assert [(c.case_id, a) for c, a in again] == [(c.case_id, a) for c, a in blamed]
    off = ReflectiveOptimizer(scorer, reuse_train=False, masked=False)
    plain, _, spent = off._attribute(train)
    assert spent["masked"] == 0 and len(plain) == len(blamed) - len(masked)


def test_the_round_line_counts_first_faults_and_names_the_faults_behind_them():
    from memopt.cli.optimize import round_line
    from memopt.optimize.state import RoundRecord

    record = RoundRecord(1, None, {"f1": 0.4}, None, blamed_ops={"extract": 42, "answer": 16},
                         attribution={"attributed": 58, "masked": 19})
    line = round_line(record, 4)
    assert "blamed extract 42, answer 16 (+19 answer faults behind them)" in line
    assert "behind them" not in round_line(RoundRecord(1, None, {"f1": 0.4}, None, blamed_ops={"answer": 3}), 4)


def test_a_probe_that_fails_keeps_the_first_fault(run, caplog):
    from memopt.optimize.reflective import ReflectiveOptimizer

    system, scorer, _, pairs = run
    case, first = _list_case(pairs)
    broken = ReflectiveOptimizer(scorer)
    saved = case.G.graph["pipeline"]
    case.G.graph["pipeline"] = "no-such-pipeline"  # the replay cannot rebuild the system
    try:
        with caplog.at_level("WARNING", logger="memopt.attribution.masked"):
            assert broken._behind([(case, first)]) == {}
    finally:
        case.G.graph["pipeline"] = saved
    conversation = case.G.graph["conversation"]
    assert any(conversation in r.getMessage() and "keep their first faults" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("output", ["[1 May 2022] Zoe: an old line", {"memories": []}, [], None])
def test_the_evidence_goes_first_in_the_context_op_s_own_shape(run, output):
    from memopt.attribution.counterfactual import with_units

    _, _, _, pairs = run
    case, _ = _list_case(pairs)
    fixed = with_units(case.G, output, case.evidence_turns)
    text = fixed if isinstance(fixed, str) else str(next(iter(fixed.values())) if isinstance(fixed, dict) else fixed)
    assert all(words in text for words in case.evidence_words)
    if isinstance(output, str):
        assert fixed.endswith(output)
    assert with_units(case.G, {"memories": "a text, not a list"}, case.evidence_turns) is None
    assert with_units(case.G, {}, case.evidence_turns) is None


def test_a_methods_replays_in_a_round_run_on_the_counted_task_lm(run):
    """verify and counterfactual replay the conversation: in an optimizer round their task calls count against the
    budget (they ran on an uncounted LM built from the graph's spec before)."""
    from memopt.optimize.reflective import ReflectiveOptimizer

    system, scorer, conversations, _ = run
    optimizer = ReflectiveOptimizer(scorer, verify=True, masked=False, replay=False, sample=6)
    train = optimizer._evaluate(system, conversations)
    before = scorer.usage_by_meter()["task"].calls
    blamed, _, _ = optimizer._attribute(train)
    assert blamed and all(a.verified is not None for _, a in blamed)
    assert scorer.usage_by_meter()["task"].calls > before


@pytest.mark.slow  # a traced run and two `memopt attribute` processes (CI runs it with -m slow)
def test_memopt_attribute_masked_adds_a_line_behind_each_upstream_fault(tmp_path):
    import json
    import subprocess
    import sys

    from memopt.evaluate.pipeline import run_pipeline

    run_pipeline("mem0", "synthetic:conversations=2,sessions=8,seed=0", trace_dir=tmp_path / "graphs",
                 judge_lm="sim", knobs={"top_k": 10}).save(tmp_path / "results.json")

    def attribute(*extra: str) -> tuple[list[dict], str]:
        out = tmp_path / f"attributions{len(extra)}.jsonl"
        done = subprocess.run([sys.executable, "-m", "memopt", "attribute", "--results", "results.json", "--trace",
                               "graphs", "--out", out.name, *extra], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in out.read_text().splitlines()], done.stdout

    firsts, _ = attribute()
    both, printed = attribute("--masked")
    behind = [a for a in both if a["details"].get("masked_by")]
    def timeless(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in rows]

    assert behind and timeless([a for a in both if a not in behind]) == timeless(firsts)  # first faults unchanged
    assert all(a["operation"] == "answer" and a["error_type"] == "ResponseError" for a in behind)
    for a in behind:  # each follows its own first fault, an upstream one
        first = both[both.index(a) - 1]
        assert first["case_id"] == a["case_id"] and first["operation"] != "answer"
        assert a["details"]["masked_by"] == first["op_id"]
    assert f"{len(behind)} answer-op faults behind them" in printed
