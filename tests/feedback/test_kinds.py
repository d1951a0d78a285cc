"""The five feedback kinds on one real round (mem0, SimLM, traced and attributed): what each tells the reflection
LM, which ops each rewrites, and that SimLM reads memopt's own attribution feedback."""

from __future__ import annotations

import re

import pytest

from memopt.feedback.build import MISLEADING_ADVICE
from memopt.lm.spec import parse_lm_specs
from memopt.simlm.reflect import operation_kind, read_evidence
from memopt.taxonomy import ERROR_TYPES


def first_round(source: str) -> tuple:
    """Round 1 of mem0 on ``source`` with SimLM: the system, the scorer, the train scores and the attributions."""
    from memopt.data.source import load_data
    from memopt.optimize.reflective import ReflectiveOptimizer
    from memopt.optimize.scoring import Scorer
    from memopt.systems import make_system

    _, conversations = load_data(source)
    scorer = Scorer(*[parse_lm_specs("sim")] * 3, budget=100_000)
    system = make_system("mem0")
    optimizer = ReflectiveOptimizer(scorer)
    train = optimizer._evaluate(system, conversations)
    blamed, _, _ = optimizer._attribute(train)
    return system, scorer, train, blamed


@pytest.fixture(scope="module")
def round_one():
    """Round 1 of a small mem0 optimization: the system, the train scores and the attributions."""
    return first_round("synthetic:conversations=2,sessions=6,seed=3")


def _feedback(round_one, kind: str, round_index: int = 1):
    from memopt.optimize.reflective import ReflectiveOptimizer

    system, scorer, train, blamed = round_one
    return ReflectiveOptimizer(scorer, feedback=kind)._feedback(system, train, blamed, round_index)


def _kind(system, op: str) -> str:
    return operation_kind(f"{system.name}.{op}: {system.op_spec(op).description}")


def test_simlm_reads_memopts_attribution_feedback(round_one):
    system = round_one[0]
    found = _feedback(round_one, "attribution")
    assert "extract" in found
    for op, fb in found.items():
        ev = read_evidence(_kind(system, op), fb.text())
        assert ev.examples == len(fb.examples) and ev.strength > 0.5, (op, fb.text())
    assert "all_participants" in read_evidence("extract", found["extract"].text()).weights


def test_misleading_keeps_the_ops_but_shows_other_ops_failures_and_contradicting_advice(round_one):
    attribution, misleading = _feedback(round_one, "attribution"), _feedback(round_one, "misleading")
    assert list(misleading) == list(attribution)
    blamed = round_one[3]
    system = round_one[0]
    for op, fb in misleading.items():
        advice = MISLEADING_ADVICE[system.op_spec(op).stages[0]]  # chosen by the op's declared stage
        assert fb.counts == attribution[op].counts and fb.advice == [advice]
        shown = set(re.findall(r"^Question: (.*)$", fb.text(), re.M))
        assert shown and shown <= {c.question for c, a in blamed if a.operation != op}
        assert fb.text().endswith(advice)


def test_outcome_feedback_has_no_attribution_and_goes_round_robin(round_one):
    system = round_one[0]
    rounds = [_feedback(round_one, "outcome", i) for i in (1, 2)]
    assert [list(r) for r in rounds] == [system.llm_operations()[:2], [system.llm_operations()[2],
                                                                      system.llm_operations()[0]]]
    text = rounds[0]["extract"].text()
    assert len(re.findall(r"^Question: .*\?$", text, re.M)) == 5 and "Prediction: " in text
    assert not any(error in text for error in ERROR_TYPES)
    assert not re.search(r"produced|blamed|operation|extract:|update:", text)
    assert rounds[0]["extract"].text() != rounds[1]["extract"].text()  # another rotation of the failures


def test_score_and_empty_feedback_give_reflection_nothing_to_read(round_one):
    score, empty = _feedback(round_one, "score"), _feedback(round_one, "empty")
    assert set(empty) == set(_feedback(round_one, "attribution")) and all(fb.text() == "" for fb in empty.values())
    for fb in score.values():
        assert re.fullmatch(r"Average F1 \d\.\d{3} over \d+ training questions; \d+ were judged wrong\.", fb.text())
        ev = read_evidence("extract", fb.text())
        assert ev.examples == 0 and ev.weights == {} and ev.advice == []


def test_gepa_outcome_metric_gives_every_predictor_the_outcome_without_running_the_case_again(round_one):
    import dspy

    from memopt.data.source import load_data
    from memopt.optimize.gepa import AttributionFeedbackMetric

    system, scorer, _, _ = round_one
    _, [conversation, _] = load_data("synthetic:conversations=2,sessions=6,seed=3")
    case = conversation.cases[0]
    metric = AttributionFeedbackMetric(system, scorer, feedback="outcome")
    gold = dspy.Example(conversation=conversation, question=case.question, case=case)
    before = scorer.usage().calls
    out = [metric(gold, dspy.Prediction(answer="Not mentioned"), pred_name=op) for op in system.llm_operations()]
    assert scorer.usage().calls == before
    assert len({o.feedback for o in out}) == 1
    assert out[0].feedback == (f"Question: {case.question}\nGold answer: {case.gold}\nPrediction: Not mentioned\n"
                               f"Score: F1 {out[0].score:.2f}")


def test_simlm_reads_memopts_attribution_feedback_in_every_format(round_one):
    """The format controls (`memopt.feedback.formats`) carry the same evidence as memopt's own format."""
    from memopt.feedback.formats import FORMATS, restyle

    system = round_one[0]
    for op, fb in _feedback(round_one, "attribution").items():
        native = read_evidence(_kind(system, op), fb.text())
        for fmt in FORMATS:
            ev = read_evidence(_kind(system, op), restyle(fb, fmt).text())
            assert (ev.examples, ev.strength, set(ev.weights)) == (native.examples, native.strength,
                                                                    set(native.weights)), (op, fmt)
