"""The attribution methods by name, and `attribute`, the one entry point the CLI, bench and optimizers use.

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

from collections.abc import Callable

from memopt.attribution.baselines import all_at_once, binary_search, blame_response, step_by_step
from memopt.attribution.case import FailedCase
from memopt.attribution.counterfactual import counterfactual
from memopt.attribution.counterfactual import verify as verify_attribution
from memopt.attribution.memtrace import memtrace
from memopt.attribution.types import Attribution
from memopt.errors import ConfigError
from memopt.judge import Judge

__all__ = ["METHODS", "attribute"]

METHODS: dict[str, Callable[[FailedCase, Judge], Attribution]] = {
    "memtrace": memtrace,
    "counterfactual": counterfactual,
    "all_at_once": all_at_once,
    "step_by_step": step_by_step,
    "binary_search": binary_search,
    "blame_response": blame_response,
}


def attribute(case: FailedCase, judge: Judge, method: str = "memtrace", *, verify: bool = False) -> Attribution:
    """Blame one failed case with the named method (and verify the blamed op by replay when asked)."""
    if method not in METHODS:
        raise ConfigError(f"unknown attribution method {method!r}; choose one of: {', '.join(METHODS)}.")
    found = METHODS[method](case, judge)
    if verify and found.verified is None:
        return verify_attribution(case, found, judge)
    return found
