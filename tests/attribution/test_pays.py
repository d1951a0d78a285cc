"""Attribution that pays: replay of byte-identical cases (0 judge calls), a stratified sample of the failures,
a run that stops when a round would repeat an earlier one, and feedback examples that cover the failure kinds."""

from __future__ import annotations

import copy

import networkx as nx
import pytest

from memopt.attribution.case import FailedCase
from memopt.attribution.replay import case_fingerprint, stratified_sample
from memopt.attribution.types import Attribution
from memopt.lm.spec import parse_lm_specs

DATA = "synthetic:conversations=2,sessions=6,seed=3"


@pytest.fixture(scope="module")
def traced():
    """A mem0 system, a SimLM scorer, and the system's train evaluation (traced, judged)."""
    from memopt.data.source import load_data
    from memopt.optimize.scoring import Scorer
    from memopt.systems import make_system

    _, conversations = load_data(DATA)
    scorer = Scorer(*[parse_lm_specs("sim")] * 3, budget=100_000)
    system = make_system("mem0")
    return system, scorer, conversations


def _judge_calls(scorer) -> int:
    return scorer.usage_by_meter()["judge"].calls


def test_second_round_with_unchanged_cases_makes_no_attribution_judge_call(traced):
    from memopt.optimize.reflective import ReflectiveOptimizer

    system, scorer, conversations = traced
    optimizer = ReflectiveOptimizer(scorer, reuse_train=False)  # replay on, every failure attributed, runs again
    first = optimizer._evaluate(system, conversations)
    before = _judge_calls(scorer)
    blamed, _, spent = optimizer._attribute(first)
    assert spent["failed"] == spent["attributed"] == len(blamed) - spent["masked"] > 0 and spent["replayed"] == 0
    assert spent["judge_calls"] > 0 and _judge_calls(scorer) - before >= spent["judge_calls"]

    again = optimizer._evaluate(system, conversations)  # the same prompts: new graphs, byte-identical cases
    before = _judge_calls(scorer)
    replayed, _, spent = optimizer._attribute(again)
    assert _judge_calls(scorer) == before  # not one judge call
    masked = sum(bool(a.details.get("masked_by")) for _, a in blamed)
    assert spent == {"failed": len(blamed) - masked, "sampled": 0, "replayed": len(blamed) - masked, "attributed": 0,
                     "judge_calls": 0, "masked": masked}
    assert [(c.case_id, a) for c, a in replayed] == [(c.case_id, a) for c, a in blamed]
    assert all(c.G is not first_case.G for (c, a), (first_case, _) in zip(replayed, blamed, strict=True)
               if not a.details.get("masked_by"))  # a masked fault's case is its replay, kept as it was

    changed = system.with_instructions({"answer": system.instructions()["answer"] + " Answer in one short phrase."})
    third = optimizer._evaluate(changed, conversations)  # the answer op's prompt changed: every case is new
    before = _judge_calls(scorer)
    _, _, spent = optimizer._attribute(third)
    assert spent["replayed"] == 0 and spent["attributed"] == spent["failed"] > 0
    assert _judge_calls(scorer) > before


def test_fingerprint_changes_with_the_cases_ops_only(traced):
    from memopt.attribution.case import failed_cases
    from memopt.optimize.reflective import ReflectiveOptimizer

    system, scorer, conversations = traced
    train = ReflectiveOptimizer(scorer)._evaluate(system, conversations)
    by_id = {r.case_id: r.to_dict() for r in train.results}
    G = next(g for g in train.graphs.values() if len(failed_cases(g, by_id)) >= 2)
    one, other = failed_cases(G, by_id)[:2]
    H = copy.deepcopy(G)
    moved = FailedCase(H, one.case_id, one.question, one.gold, one.evidence, one.prediction, one.category,
                       one.pseudo_evidence)
    assert case_fingerprint(moved) == case_fingerprint(one)  # a copy is byte-identical
    H.nodes[moved.answer_op]["output"] = {"answer": "something else"}  # this case's own answer op
    assert case_fingerprint(moved) != case_fingerprint(one)
    H2 = copy.deepcopy(G)
    other_op = FailedCase(H2, other.case_id, other.question, other.gold, other.evidence).answer_op
    H2.nodes[other_op]["output"] = {"answer": "something else"}  # another question's op: not this case's
    unchanged = FailedCase(H2, one.case_id, one.question, one.gold, one.evidence, one.prediction, one.category,
                           one.pseudo_evidence)
    assert case_fingerprint(unchanged) == case_fingerprint(one)
    ingest = next(n for n, d in H2.nodes(data=True) if d.get("type") == "op" and d["operation"] == "extract")
    H2.nodes[ingest]["output"] = {"facts": ["a fact nobody said"]}  # an ingest op every case can read
    assert case_fingerprint(unchanged) != case_fingerprint(one)
    assert case_fingerprint(one, method="memtrace") != case_fingerprint(one, method="step_by_step")


def _cases(categories: list[int]) -> list[FailedCase]:
    G = nx.DiGraph()
    return [FailedCase(G, f"c:q{i}", f"question {i}?", "gold", (), category=cat) for i, cat in enumerate(categories)]


def test_stratified_sample_is_proportional_with_every_stratum_seen():
    cases = _cases([1] * 40 + [2] * 16 + [3] * 3 + [4])
    sample = stratified_sample(cases, 12, lambda case: "new")
    counts = {cat: sum(c.category == cat for c in sample) for cat in (1, 2, 3, 4)}
    assert len(sample) == 12 and counts == {1: 7, 2: 3, 3: 1, 4: 1}
    assert [c.case_id for c in sample] == sorted((c.case_id for c in sample), key=lambda i: int(i[3:]))  # in order
    firsts = [c for c in sample if c.category == 1]
    assert firsts[0].case_id == "c:q0" and firsts[-1].case_id != "c:q6"  # spread through the stratum, not the head
    by_op = stratified_sample(cases, 12, lambda case: "extract" if int(case.case_id[3:]) % 2 else "answer")
    assert {(c.category, int(c.case_id[3:]) % 2) for c in by_op} >= {(1, 0), (1, 1), (2, 0), (2, 1)}
    assert stratified_sample(cases, None, lambda case: "new") == cases
    assert stratified_sample(cases, 100, lambda case: "new") == cases
    assert [c.category for c in stratified_sample(cases, 2, lambda case: "new")] == [1, 2]  # the largest strata


def _pair(i: int, category: int, error: str = "ExtractionError") -> tuple[FailedCase, Attribution]:
    G = nx.DiGraph()
    case = FailedCase(G, f"c:q{i:02d}", f"question {i}?", "gold", (f"D1:{i}",), category=category)
    return case, Attribution(case.case_id, error, "extract:c:S1", "extract")


def test_feedback_examples_cover_question_categories_and_error_types():
    from memopt.feedback.build import MAX_EXAMPLES, _pick

    items = [_pick_item for i in range(8) for _pick_item in [_pair(i, 1)]]  # many single-hop failures first
    items += [_pair(20, 3), _pair(21, 4), _pair(22, 2, "UpdateError"), _pair(23, 1, "UpdateError")]
    picked = _pick(items)
    assert len(picked) == MAX_EXAMPLES
    assert {c.category for c, _ in picked} == {1, 2, 3, 4}  # the first five would all be category 1
    assert {a.error_type for _, a in picked} == {"ExtractionError", "UpdateError"}


@pytest.mark.slow  # two optimizer rounds (CI runs it with -m slow)
def test_a_round_that_would_repeat_an_earlier_one_stops_the_run(tmp_path):
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import NullTracker
    from tests.conftest import ROOT

    tiny = tmp_path / "tiny.yaml"
    text = (ROOT / "experiments" / "quickstart.yaml").read_text()
    tiny.write_text(text.replace("conversations=12,sessions=8", "conversations=4,sessions=3"))
    experiment = load_experiment(tiny, {"rounds": 5, "optimizer.min_gain": 1.0})  # no round can be accepted
    summary = run_experiment(experiment, tracker=NullTracker())
    # an op whose rewrites lost steps aside until the others had a turn: mem0's three LLM ops, two per round, take
    # turns (extract+answer, update+..., ...) and round 4 would be round 1 again
    ops = [sorted({c["op"] for c in r["candidates"]}) for r in summary["rounds"]]
    assert summary["stopped"].startswith("state repeated: round 4 would see the prompts, knobs and feedback of "
                                         "round 1"), (summary["stopped"], ops)
    assert len(summary["rounds"]) == 3 and summary["status"] == "FINISHED"
    assert len({tuple(o) for o in ops}) == 3 and set().union(*map(set, ops)) == {"extract", "update", "answer"}, ops
    assert summary["rounds"][0]["attribution"]["attributed"] > 0


@pytest.mark.slow  # three small optimizations through the CLI (CI runs it with -m slow)
def test_a_resumed_run_picks_the_ops_an_uninterrupted_one_picks(tmp_path):
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    tiny = tmp_path / "tiny.yaml"
    text = (ROOT / "experiments" / "quickstart.yaml").read_text()
    tiny.write_text(text.replace("conversations=12,sessions=8", "conversations=4,sessions=3")
                    .replace("  trials: 8\n", "  trials: 8\n  min_gain: 1.0\n"))  # no round is accepted

    def optimize(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "memopt", "optimize", str(tiny), "--out", "summary.json", *args],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((tmp_path / "summary.json").read_text())

    def ops(summary: dict) -> list[list[str]]:
        return [sorted({c["op"] for c in r["candidates"]}) for r in summary["rounds"]]

    whole = optimize("--rounds", "2", "--tracking-uri", f"sqlite:///{tmp_path}/whole.db")
    first = optimize("--rounds", "1", "--tracking-uri", f"sqlite:///{tmp_path}/split.db")
    resumed = optimize("--rounds", "2", "--tracking-uri", f"sqlite:///{tmp_path}/split.db", "--resume", first["run_id"])
    assert not any(r["accepted"] for r in whole["rounds"])
    assert ops(whole)[0] != ops(whole)[1]  # round 1's ops lost, so round 2 rewrites others first
    assert ops(resumed) == ops(whole), (ops(resumed), ops(whole))


@pytest.mark.slow  # three small optimizations through the CLI (CI runs it with -m slow)
def test_a_resumed_run_stops_on_a_repeat_where_an_uninterrupted_one_stops(tmp_path):
    """Score feedback on every op and no round accepted: round 2 would see round 1's prompts, knobs and feedback."""
    import json
    import subprocess
    import sys

    from tests.conftest import ROOT

    tiny = tmp_path / "tiny.yaml"
    text = (ROOT / "experiments" / "quickstart.yaml").read_text()
    tiny.write_text(text.replace("conversations=12,sessions=8", "conversations=4,sessions=3")
                    .replace("  ops_per_round: 2\n", "  ops_per_round: 3\n")
                    .replace("  trials: 8\n", "  trials: 8\n  min_gain: 1.0\n  feedback: score\n"))

    def optimize(*args: str) -> dict:
        done = subprocess.run([sys.executable, "-m", "memopt", "optimize", str(tiny), "--out", "summary.json", *args],
                              capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads((tmp_path / "summary.json").read_text())

    whole = optimize("--rounds", "3", "--tracking-uri", f"sqlite:///{tmp_path}/whole.db")
    first = optimize("--rounds", "1", "--tracking-uri", f"sqlite:///{tmp_path}/split.db")
    resumed = optimize("--rounds", "3", "--tracking-uri", f"sqlite:///{tmp_path}/split.db", "--resume", first["run_id"])
    assert whole["stopped"].startswith("state repeated: round 2 would see"), whole["stopped"]
    assert [r["round"] for r in resumed["rounds"]] == [r["round"] for r in whole["rounds"]] == [1]
    assert resumed["stopped"] == whole["stopped"]
