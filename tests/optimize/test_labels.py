"""An experiment's ``attribution.labels``: the cases a team flagged as no memory failure leave each round's failures,
attributions and feedback (`memopt.attribution.labels`)."""

from __future__ import annotations

import pytest

from memopt.attribution.labels import Label, LabelSet, load_labels
from memopt.core.errors import DataError
from memopt.optimize.experiment import load_experiment
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
SMALL = {"data.source": "synthetic:conversations=4,sessions=4,seed=0", "rounds": 1, "optimizer.candidates": 1,
         "optimizer.trials": 2, "attribution.sample": None, "attribution.masked": False}


def _round_one(overrides: dict):
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import NullTracker

    seen = []

    class Keep:
        def on_event(self, event):
            if event.kind == "round_scored" and event.outcome is not None:
                seen.append(event.outcome)

    run_experiment(load_experiment(QUICKSTART, {**SMALL, **overrides}), tracker=NullTracker(), observers=[Keep()])
    [outcome] = seen
    return outcome


@pytest.mark.slow  # two one-round optimizations (about 20 s)
def test_flagged_cases_leave_the_rounds_failures_and_feedback(tmp_path):
    before = _round_one({})
    failed = [case.case_id for case, _ in before.attributions]
    flagged = failed[:3]
    path = tmp_path / "labels.jsonl"
    labels = LabelSet(path)
    for case_id in flagged:
        labels = labels.with_label(Label(case_id, "flagged", flags=("wrong_expected_answer",)))
    labels.save()
    after = _round_one({"attribution.labels": str(path)})
    assert after.attribution["failed"] == before.attribution["failed"] - 3
    assert not {case.case_id for case, _ in after.attributions} & set(flagged)
    assert sum(after.failures_by_type.values()) == sum(before.failures_by_type.values()) - 3


def test_a_missing_labels_file_is_one_clear_error(tmp_path):
    from memopt.optimize.optimizers import _flagged

    experiment = load_experiment(QUICKSTART, {"attribution.labels": str(tmp_path / "none.jsonl")})
    with pytest.raises(DataError, match="none.jsonl: no such labels file"):
        _flagged(experiment)
    assert load_labels(tmp_path / "none.jsonl", missing_ok=True).flagged == frozenset()
