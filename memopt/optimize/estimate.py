"""`estimate_experiment`: the LM calls, tokens and dollars an experiment will spend, before spending anything.

Basis: a **dry pass** of the whole experiment with SimLM in every role (in-process: no network,
nothing logged to MLflow, no reply cache), counting calls and tokens per meter exactly as the real
run counts them; the tokens are then priced at LiteLLM's prices of the configured models (its local
cost map). The dry pass follows the experiment's own loop: its data and splits, rounds, candidates,
trials, budget and reporting, so its call count is the count of a run in which the real LM fails
where SimLM fails. A real LM fails elsewhere, so its rounds blame other ops, ask other questions of
the judge, and may stop at another point; token counts differ too (SimLM's replies are short, a real
LM's may be longer; prompts are the same). It is an estimate with that basis, not a quote; the budget
(``budget.max_lm_calls``, ``--max-cost``) is what caps the real run. Replies a real run finds in the
reply cache cost nothing; the estimate assumes none are cached.
"""

from __future__ import annotations

import time
from typing import Any

from memopt.optimize.experiment import Experiment

__all__ = ["estimate_experiment", "round_zero_cost", "BASIS"]

BASIS = ("a dry pass of the whole experiment with SimLM in every role (no network, nothing logged, no cache), "
         "counting calls and tokens per meter; dollars at LiteLLM's prices for the configured models. A real LM "
         "fails elsewhere, so its run may differ; the budget caps it.")


class _RoundZeroDone(Exception):
    """Ends a dry pass after round 0."""


def _dry(experiment: Experiment) -> Experiment:
    """The experiment with SimLM in every role, no cache and no cost limit (what a dry pass runs)."""
    from memopt.lm.spec import sim_spec

    sim = [sim_spec(experiment.seed)]
    lm = experiment.lm.model_copy(update={"task": sim, "judge": sim, "reflection": sim, "concurrency": None,
                                          "cache": False})
    return experiment.model_copy(update={"lm": lm, "budget": experiment.budget.model_copy(
        update={"max_cost_usd": None})})


def round_zero_cost(experiment: Experiment) -> float | None:
    """Dollars round 0 (scoring the starting prompts on val and test) is expected to cost: a dry pass of that
    round alone, priced like `estimate_experiment`; None when a configured model has no price."""
    from memopt.lm.costs import price
    from memopt.optimize.events import make_tracker
    from memopt.optimize.loop import run_experiment
    from memopt.optimize.scoring import ROLE_OF
    from memopt.systems.base import clear_ingest_cache

    usage: dict[str, dict[str, Any]] = {}

    def stop(record: Any) -> None:
        usage.update(record.usage)
        raise _RoundZeroDone

    clear_ingest_cache()
    try:
        run_experiment(_dry(experiment), tracker=make_tracker("untracked", experiment), on_round=stop)
    except _RoundZeroDone:
        pass
    costs = [price(getattr(experiment.lm, ROLE_OF[meter]), u["input_tokens"], u["output_tokens"])
             for meter, u in usage.items()]
    return None if not costs or any(c is None for c in costs) else round(sum(costs), 6)


def estimate_experiment(experiment: Experiment) -> dict[str, Any]:
    """Expected calls, tokens and cost per meter and in total, from a dry pass with SimLM (see the module doc)."""
    from memopt.lm.costs import cost_label, free, price
    from memopt.optimize.events import make_tracker
    from memopt.optimize.loop import run_experiment
    from memopt.optimize.scoring import METERS, ROLE_OF
    from memopt.systems.base import clear_ingest_cache

    clear_ingest_cache()
    dry = _dry(experiment)
    started = time.perf_counter()
    summary = run_experiment(dry, tracker=make_tracker("untracked", dry))
    seconds = time.perf_counter() - started
    meters: dict[str, dict[str, Any]] = {}
    for meter in METERS:
        spec = getattr(experiment.lm, ROLE_OF[meter])
        u = summary["usage"][meter]
        cost = price(spec, u["input_tokens"], u["output_tokens"])
        meters[meter] = {"lm": ", ".join(s.raw for s in spec), "calls": u["calls"],
                         "input_tokens": u["input_tokens"], "output_tokens": u["output_tokens"], "cost_usd": cost,
                         "cost": cost_label(cost, free(spec))}
    costs = [m["cost_usd"] for m in meters.values()]
    total_cost = None if any(c is None for c in costs) else round(sum(costs), 6)
    specs = [s for meter in METERS for s in getattr(experiment.lm, ROLE_OF[meter])]
    total = {"lm": "", "calls": sum(m["calls"] for m in meters.values()),
             "input_tokens": sum(m["input_tokens"] for m in meters.values()),
             "output_tokens": sum(m["output_tokens"] for m in meters.values()), "cost_usd": total_cost,
             "cost": cost_label(total_cost, free(specs))}
    return {"experiment": experiment.name, "basis": BASIS, "dry_pass_seconds": round(seconds, 1),
            "rounds": len(summary["rounds"]), "stopped": summary["stopped"],
            "max_cost_usd": experiment.budget.max_cost_usd, "meters": {**meters, "total": total}}
