"""memopt's own attribution methods, registered by name, and `attribute`, the one entry point the CLI, bench and
optimizers use (plug-ins register through `memopt.attribution.registry`).

Every method takes a `FailedCase` and a `Judge` and returns an `Attribution` whose ``method`` is its
name, with the judge calls and seconds it spent:

- ``memtrace``: provenance-guided tracing back from the answer (`memopt.attribution.memtrace`);
- ``counterfactual``: the earliest locally wrong op whose oracle correction rescues the answer, by replay;
- ``all_at_once``, ``step_by_step``, ``binary_search``, ``blame_response``: the baselines
  (`memopt.attribution.baselines`).

``attribute(..., verify=True)`` also replays the blamed op with its oracle correction
(`memopt.attribution.counterfactual.verify`) and sets ``verified``.
"""

from __future__ import annotations

from memopt.attribution.baselines import all_at_once, binary_search, blame_response, step_by_step
from memopt.attribution.case import FailedCase
from memopt.attribution.counterfactual import counterfactual
from memopt.attribution.counterfactual import verify as verify_attribution
from memopt.attribution.memtrace import memtrace
from memopt.attribution.registry import METHODS, attribution_method, get_method
from memopt.attribution.types import Attribution
from memopt.judge.judges import Judge

__all__ = ["METHODS", "attribute"]

attribution_method("memtrace")(memtrace)
attribution_method("counterfactual", needs_replay=True)(counterfactual)
for _method in (all_at_once, step_by_step, binary_search, blame_response):
    attribution_method(_method.__name__)(_method)


def attribute(case: FailedCase, judge: Judge, method: str = "memtrace", *, verify: bool = False) -> Attribution:
    """Blame one failed case with the named method (and verify the blamed op by replay when asked)."""
    found = get_method(method)(case, judge)
    if verify and found.verified is None:
        return verify_attribution(case, found, judge)
    return found
