"""Attribution that pays: the examples memopt shows are failures whose trace says what was lost, memopt's blamed ops
are ranked by the failures it can explain and set aside when their rewrites lost, and the controls (empty,
misleading, outcome) keep the op choice and examples they had."""

from __future__ import annotations

import re

import pytest

from memopt.feedback.build import MAX_EXAMPLES, _grouped, _losses, _observation, _pick
from tests.feedback.test_kinds import first_round


@pytest.fixture(scope="module")
def round_one():
    """Round 1 of mem0 on synthetic data other than test_feedback's: system, scorer, train scores, attributions."""
    return first_round("synthetic:conversations=4,sessions=8,seed=5")


def _optimizer(round_one, kind: str, **options):
    from memopt.optimize.reflective import ReflectiveOptimizer

    return ReflectiveOptimizer(round_one[1], feedback=kind, **options)


def _mapping(system):
    return {spec.name: system.prompt_ops(spec.name) for spec in system.operations}


def test_examples_are_failures_whose_trace_shows_the_loss_first(round_one):
    system, _, train, blamed = round_one
    grouped = _grouped(blamed, _mapping(system))
    mixed = [op for op, items in grouped.items()
             if sum(bool(_losses(c, a)) for c, a in items) >= MAX_EXAMPLES and any(not _losses(c, a) for c, a in items)]
    assert mixed, "the fixture needs an op with both explained and unexplained failures"
    found = _optimizer(round_one, "attribution", ops_per_round=3)._feedback(system, train, blamed, 1)
    for op in mixed:
        items = grouped[op]
        reasons = {a.reason for _, a in items if not _losses(_, a)}
        observations = re.findall(r"^Observation: (.*)$", found[op].text(), re.M)
        assert len(observations) == MAX_EXAMPLES
        assert not set(observations) & reasons  # every example says what was lost, not just who is blamed
        assert found[op].explained == sum(bool(_losses(c, a)) for c, a in items)
    # the plain pick (the misleading control's) still covers categories whatever the explanation
    plain = [_pick(grouped[op]) for op in mixed]
    assert any(not _losses(c, a) for picked in plain for c, a in picked)
    assert all(_observation(c, a) == a.reason for picked in plain for c, a in picked if not _losses(c, a))


def test_memopts_ops_are_ranked_by_explained_failures(round_one):
    system, _, train, blamed = round_one
    grouped = _grouped(blamed, _mapping(system))
    extract = [item for item in grouped["extract"] if not _losses(*item)]
    assert len(extract) >= 3, "the fixture needs extract failures the trace does not explain"
    extract += [item for item in grouped["extract"] if _losses(*item)][:1]
    answer = [item for item in grouped["answer"] if _losses(*item)][: len(extract) - 1]
    subset = extract + answer  # extract is blamed more, answer's failures are explained more
    ranked = _optimizer(round_one, "attribution", ops_per_round=1)._feedback(system, train, subset, 1)
    assert list(ranked) == ["answer"]
    for kind in ("empty", "misleading"):  # the controls keep the plain ranking by blame
        assert list(_optimizer(round_one, kind, ops_per_round=1)._feedback(system, train, subset, 1)) == ["extract"]


def test_ops_whose_rewrites_lost_step_aside_until_a_round_is_accepted(round_one):
    system, _, train, blamed = round_one
    optimizer = _optimizer(round_one, "attribution", ops_per_round=2)
    full = _optimizer(round_one, "attribution", ops_per_round=3)._feedback(system, train, blamed, 1)
    assert len(full) == 3, "the fixture needs three blamed LLM ops"
    first = optimizer._feedback(system, train, blamed, 1)
    assert list(first) == list(full)[:2]
    optimizer._learn(first, accepted=False)
    second = optimizer._feedback(system, train, blamed, 2)
    assert list(second)[0] == list(full)[2]  # the op never rewritten gets its turn
    assert list(second)[1] == list(full)[0]  # then the best explained of those that lost
    optimizer._learn(second, accepted=False)
    third = optimizer._feedback(system, train, blamed, 3)
    assert list(third) == [list(full)[1], list(full)[2]]  # lost once before lost twice; then by explanation
    optimizer._learn(third, accepted=True)  # the system changed: every op may pay again
    assert list(optimizer._feedback(system, train, blamed, 4)) == list(full)[:2]


def test_a_resumed_optimizer_sets_aside_what_its_checkpointed_rounds_lost(round_one):
    from memopt.optimize.state import RoundRecord

    system, _, train, blamed = round_one
    ran = _optimizer(round_one, "attribution", ops_per_round=2)
    records = [RoundRecord(0, None, {"f1": 0.3}, None)]
    for index in (1, 2):
        feedback = ran._feedback(system, train, blamed, index)
        ran._learn(feedback, accepted=False)
        records.append(RoundRecord(index, None, {"f1": 0.3}, None, accepted=False,
                                   feedback={op: fb.text() for op, fb in feedback.items()}))
    resumed = _optimizer(round_one, "attribution", ops_per_round=2)
    resumed.resume(records)  # what `run_experiment(..., resume=...)` does with the checkpoint's records
    assert resumed.stale == ran.stale and resumed.stale
    after = list(ran._feedback(system, train, blamed, 3))
    assert list(resumed._feedback(system, train, blamed, 3)) == after
    assert list(_optimizer(round_one, "attribution", ops_per_round=2)._feedback(system, train, blamed, 3)) != after
    records.append(RoundRecord(3, None, {"f1": 0.4}, None, accepted=True, feedback={after[0]: "..."}))
    accepted = _optimizer(round_one, "attribution", ops_per_round=2)
    accepted.resume(records)
    assert accepted.stale == {}  # an accepted round lets every op pay again


@pytest.mark.parametrize("kind", ["empty", "misleading", "outcome"])
def test_controls_keep_their_op_choice_after_a_lost_round(round_one, kind):
    system, _, train, blamed = round_one
    optimizer = _optimizer(round_one, kind)
    before = optimizer._feedback(system, train, blamed, 2)
    optimizer._learn(before, accepted=False)
    after = optimizer._feedback(system, train, blamed, 2)
    assert optimizer.stale == {} and list(after) == list(before)
    assert [fb.text() for fb in after.values()] == [fb.text() for fb in before.values()]


def test_a_round_after_a_rejected_one_reuses_the_training_run(round_one):
    from memopt.data.source import load_data

    system, scorer = round_one[0], round_one[1]
    _, conversations = load_data("synthetic:conversations=1,sessions=4,seed=2")
    optimizer = _optimizer(round_one, "attribution")
    first = optimizer._evaluate(system, conversations)
    spent = scorer.usage().calls
    again = optimizer._evaluate(system, conversations)  # the rejected round left the system unchanged
    assert again is first and scorer.usage().calls == spent
    changed = system.with_knobs(top_k=system.knobs["top_k"] + 1)
    assert optimizer._evaluate(changed, conversations) is not first and scorer.usage().calls > spent


@pytest.mark.parametrize("kind", ["outcome", "score", "empty", "misleading"])
def test_every_kind_reuses_the_training_run_unless_told_not_to(round_one, kind):
    from memopt.data.source import load_data

    system, scorer = round_one[0], round_one[1]
    _, conversations = load_data("synthetic:conversations=1,sessions=4,seed=2")
    optimizer = _optimizer(round_one, kind)
    first = optimizer._evaluate(system, conversations)
    spent = scorer.usage().calls
    assert optimizer._evaluate(system, conversations) is first and scorer.usage().calls == spent
    again = _optimizer(round_one, kind, reuse_train=False)
    again._evaluate(system, conversations)
    spent = scorer.usage().calls
    again._evaluate(system, conversations)
    assert scorer.usage().calls > spent  # told not to: every round runs the training split


@pytest.mark.parametrize(("gold", "answer", "said"), [
    ("hiking, the cello and sourdough baking", "She took up the cello.", "the cello"),
    ("Oslo; Bergen", "Bergen", "Bergen"),
])
def test_a_partial_answer_is_stated_with_the_items_given_and_left_out(gold, answer, said):
    from memopt.feedback.build import _partial

    [note] = _partial(gold, answer)
    assert f"gave only {said} and left out" in note
    assert all(item.strip() in note.split("left out", 1)[1] for item in re.split(r",|;|\band\b", gold)
               if item.strip() and item.strip() != said)


@pytest.mark.parametrize(("gold", "answer"), [
    ("hiking, the cello", "Not mentioned"),  # none of the items: not a partial answer
    ("hiking, the cello", "hiking and the cello"),  # all of them
    ("a cello", "a cello"),  # one item
])
def test_no_partial_answer_is_claimed_when_the_answer_gave_none_or_all(gold, answer):
    from memopt.feedback.build import _partial

    assert _partial(gold, answer) == []


def test_a_relative_date_is_blamed_only_where_the_ops_output_kept_it(round_one):
    from memopt.core.text import find_relative_dates
    from memopt.feedback.build import _example, _outputs

    note = "(a relative date); the gold answer is the actual date"
    differ = [(c, a) for c, a in round_one[3] if (note in " ".join(_losses(c, a, precise=False)))
              != (note in " ".join(_losses(c, a)))]
    assert differ, "the fixture needs failures whose op's output resolved the date (or dropped the fact)"
    for case, attribution in differ:
        written = (case.prediction if attribution.operation == "answer"
                   else " ".join(_outputs(case.G, attribution.op_id, " ".join(case.evidence_texts))[:4]))
        assert not find_relative_dates(written)
        assert note in _example(case, attribution, precise=False) and note not in _example(case, attribution)


def test_the_misleading_control_keeps_its_examples_and_wording(round_one):
    from memopt.feedback.build import _example, misleading_feedback

    system, _, _, blamed = round_one
    grouped = _grouped(blamed, _mapping(system))
    for op, fb in misleading_feedback(blamed, _mapping(system)).items():
        others = [pair for other, pairs in grouped.items() if other != op for pair in pairs]
        assert fb.examples == [_example(c, a, precise=False) for c, a in _pick(others)]  # category cover, old wording
