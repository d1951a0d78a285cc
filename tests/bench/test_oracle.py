"""The best-subset catalogue oracle: directive subsets per op and knobs chosen on val, the all-on prompt beside it."""

from __future__ import annotations

import itertools

import pytest

from memopt.bench.oracle import catalogue_oracle, missing_directives, oracle_instructions, subset_instructions
from memopt.optimize.experiment import load_experiment
from memopt.simlm import active_directives
from memopt.systems import make_system
from tests.conftest import ROOT

SMALL = {"data.source": "synthetic:conversations=4,sessions=4,seed=0"}


def test_subset_instructions_turn_on_exactly_the_subset():
    system = make_system("mem0")
    missing = missing_directives(system)
    assert missing["extract"] == ("resolve_dates", "all_participants", "keep_details")
    texts = subset_instructions(system, {"extract": ("keep_details",), "answer": ()})
    assert active_directives("extract", texts["extract"]) == {"keep_details"}
    assert texts["answer"] == system.instructions()["answer"]
    all_on = oracle_instructions(system)
    assert active_directives("answer", all_on["answer"]) >= set(missing["answer"])


def test_the_search_is_exhaustive_per_op_and_keeps_the_best_val_score():
    experiment = load_experiment(ROOT / "experiments" / "quickstart.yaml", SMALL)
    result = catalogue_oracle(experiment)
    system = make_system("mem0")
    assert result["all_on"]["instructions"] == oracle_instructions(system)
    missing = missing_directives(system)
    for op, ids in missing.items():
        seen = {tuple(c["directives"][op]) for c in result["choices"]}
        every = {combo for r in range(len(ids) + 1) for combo in itertools.combinations(ids, r)}
        assert seen == every, op
    assert result["val_f1"] == max(c["val_f1"] for c in result["choices"]) >= result["all_on"]["val_f1"]
    chosen = {op: tuple(ids) for op, ids in result["directives"].items()}
    assert result["instructions"] == subset_instructions(system, chosen)
    assert result["test_f1"] is not None and result["all_on"]["test_f1"] is not None


@pytest.mark.slow
def test_on_locomo_the_all_on_prompt_is_not_the_best_on_val(locomo_dev):
    experiment = load_experiment(ROOT / "experiments" / "locomo_mem0.yaml", {"data.source": str(locomo_dev)})
    result = catalogue_oracle(experiment)
    assert result["val_f1"] > result["all_on"]["val_f1"] + 0.01
    assert result["directives"] != result["all_on"]["directives"]
    assert "keep_details" not in result["directives"]["extract"]
