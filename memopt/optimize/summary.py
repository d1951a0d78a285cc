"""The summary of an optimize run (``--out summary.json``): baseline, best round, gain, LM usage and cost."""

from __future__ import annotations

from typing import Any

from memopt.optimize.experiment import Experiment
from memopt.optimize.scoring import METERS, ROLE_OF
from memopt.optimize.state import OptimizeState, RoundRecord

__all__ = ["summary_of", "usage_summary", "BUDGET_COVERS"]

BUDGET_COVERS = "task, judge, reflection and reporting calls (cached replies included)"


def usage_summary(usage: dict[str, dict[str, Any]], experiment: Experiment) -> dict[str, Any]:
    """LM usage per meter and in total (calls asked / made / from cache, tokens, cost), for the summary."""
    from memopt.lm.costs import cost_label, free, usage_report
    from memopt.lm.usage import ModelUsage

    specs = {m: getattr(experiment.lm, ROLE_OF[m]) for m in METERS}
    per = {m: usage_report(ModelUsage(**usage[m]) if m in usage else ModelUsage(), specs[m]) for m in METERS}
    total = sum((ModelUsage(**usage[m]) for m in METERS if m in usage), ModelUsage())
    costs = [r["cost_usd"] for r in per.values()]
    cost = None if any(c is None for c in costs) else round(sum(costs), 6)
    everything = [s for m in METERS for s in specs[m]]
    return {**per, "total": {**usage_report(total, everything), "cost_usd": cost,
                             "cost": cost_label(cost, free(everything))}}


def summary_of(state: OptimizeState, experiment: Experiment, *, stopped: str | None = None,
               status: str = "FINISHED") -> dict[str, Any]:
    """The ``--out summary.json`` document."""
    base = state.baseline
    best = next((r for r in state.records if r.round == state.best_round), base)
    return {
        "run_id": state.run_id, "experiment": experiment.name, "pipeline": state.pipeline, "status": status,
        "stopped": stopped,
        "baseline": {"val_f1": base.val.get("f1"), "test_f1": (base.test or {}).get("f1"),
                     "val_judge": base.val.get("judge"), "test_judge": (base.test or {}).get("judge"),
                     "errored": base.errored},
        "final": {"round": best.round, "val_f1": best.val.get("f1"), "test_f1": (best.test or {}).get("f1"),
                  "val_judge": best.val.get("judge"), "test_judge": (best.test or {}).get("judge")},
        "gain": {k: None if base_v is None or best_v is None else round(best_v - base_v, 6)
                 for k, base_v, best_v in (("val_f1", base.val.get("f1"), best.val.get("f1")),
                                           ("test_f1", (base.test or {}).get("f1"), (best.test or {}).get("f1")),
                                           ("val_judge", base.val.get("judge"), best.val.get("judge")),
                                           ("test_judge", (base.test or {}).get("judge"),
                                            (best.test or {}).get("judge")))},
        "lm_calls": state.lm_calls, "tokens": state.tokens, "best_knobs": state.best_knobs,
        "budget": {"max_lm_calls": experiment.budget.max_lm_calls, "max_cost_usd": experiment.budget.max_cost_usd,
                   "covers": BUDGET_COVERS},
        "usage": usage_summary(state.usage, experiment),
        "rounds": [{**r.summary(), "usage": _round_usage(r, experiment)} for r in state.records[1:]],
    }


def _round_usage(record: RoundRecord, experiment: Experiment) -> dict[str, Any]:
    """LM usage of the whole run up to the end of a round: calls asked / made / from cache, tokens, cost."""
    total = usage_summary(record.usage, experiment)["total"]
    return {k: total[k] for k in ("calls", "made", "cached", "errors", "input_tokens", "output_tokens", "cost_usd",
                                  "cost")}
