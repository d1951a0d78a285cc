"""The judge check of an optimize run: before round 0 trusts its judge, the judge answers clear-cut cases.

`check_run_judge` asks the run's judge (the scorer's, its calls counted like every judge call) about probes built
from the run's train and val questions and a few known pairs (`memopt.judge.check`). A judge that fails stops the
run with one `ConfigError` naming the judge and what it got wrong, before any MLflow run or round; with
``judge_check: warn`` the run goes on and every round carries the warning. A resumed run whose checkpoint holds a
passed check of the same judge is not checked again (its calls were counted once, as in the run it continues). A
judge whose every call failed was never heard: that is an LM that is down, which round 0's error limit reports (one
`EvaluationFailed` naming the split and ``lm.timeout``), so the check logs it and leaves the decision to the limit.
"""

from __future__ import annotations

import logging
from typing import Any

from memopt.core.errors import ConfigError
from memopt.data.model import Conversation
from memopt.judge.check import check_on_cases

__all__ = ["check_run_judge", "judge_name"]

log = logging.getLogger(__name__)


def judge_name(experiment: Any) -> str:
    """The judge of an experiment as written (``lm.judge``: one spec, or several endpoints)."""
    return ", ".join(spec.raw for spec in experiment.lm.judge)


def check_run_judge(experiment: Any, scorer: Any, conversations: list[Conversation],
                    checked: dict[str, Any] | None = None) -> dict[str, Any]:
    """Check the run's judge (see the module docstring); what to keep in the checkpoint: the judge, whether it
    passed, and the warning every round repeats (None when it passed). A failing judge under ``judge_check:
    stop`` is a `ConfigError`."""
    name = judge_name(experiment)
    if checked and checked.get("judge") == name:
        return checked
    result = check_on_cases(scorer.judge.correct, [(case.question, case.gold) for conv in conversations
                                                   for case in conv.cases], workers=scorer.workers)
    if result.passed:
        return {"judge": name, "passed": True, "warning": None}
    if result.probes and all(v is None for v in result.verdicts):  # never heard: an LM that is down, not a bad judge
        log.warning("the judge %r (lm.judge) could not be checked before round 0: all %d call(s) failed (first: %s); "
                    "round 0's error limit decides whether the run goes on", name, len(result.errors),
                    result.errors[0] if result.errors else "no reply")
        return {"judge": None, "passed": None, "warning": None}  # checked again on resume
    said = f"the judge {name!r} (lm.judge) failed its check before round 0: {result.summary()}; {result.behaviour()}"
    if experiment.judge_check == "stop":
        raise ConfigError(f"{said}. Fix lm.judge (the model name, its endpoint, a model able to grade answers), or "
                          "set judge_check: warn in the experiment to run with it anyway.")
    return {"judge": name, "passed": False, "warning": f"{said} (judge_check: warn)"}
