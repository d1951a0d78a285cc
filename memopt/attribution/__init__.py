"""Attribution: blame each failed answer on its earliest decisive faulty operation.

Methods are reached by name through `METHODS` / `attribute` (the modules ``memtrace`` and
``counterfactual`` keep their own names, so their functions are not re-exported here).
"""

from memopt.attribution.baselines import all_at_once, binary_search, blame_response, step_by_step
from memopt.attribution.case import FailedCase, failed_cases
from memopt.attribution.counterfactual import verify
from memopt.attribution.methods import METHODS, attribute
from memopt.attribution.types import Attribution, load_attributions, save_attributions

__all__ = [
    "METHODS",
    "Attribution",
    "FailedCase",
    "all_at_once",
    "attribute",
    "binary_search",
    "blame_response",
    "failed_cases",
    "load_attributions",
    "save_attributions",
    "step_by_step",
    "verify",
]
