"""The judge check of an optimize run: before round 0 trusts its judge, the judge answers clear-cut cases.

`check_run_judge` asks the run's judge (the scorer's, its calls counted like every judge call) about probes built
from the run's train and val questions and a few known pairs (`memopt.judge.check`). A judge that fails stops the
run with one `ConfigError` naming the judge and what it got wrong, before any MLflow run or round; with
``judge_check: warn`` the run goes on and every round carries the warning. A resumed run whose checkpoint holds a
passed check of the same judge is not checked again (its calls were counted once, as in the run it continues).
"""

from __future__ import annotations

from typing import Any

from memopt.core.errors import ConfigError
from memopt.core.parallel import map_ordered
from memopt.data.model import Conversation
from memopt.judge.check import check_judge, judge_probes

__all__ = ["check_run_judge", "judge_name"]


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
    probes = judge_probes([(case.question, case.gold) for conv in conversations for case in conv.cases])
    result = check_judge(scorer.judge.correct, probes,
                         ask_all=lambda ask, items: map_ordered(ask, items, workers=scorer.workers))
    if result.passed:
        return {"judge": name, "passed": True, "warning": None}
    said = (f"the judge {name!r} (lm.judge) failed its check before round 0: {result.summary()}. A judge that "
            "agrees with everything hides every failure, so nothing would be attributed or improved")
    if experiment.judge_check == "stop":
        raise ConfigError(f"{said}. Fix lm.judge (the model name, its endpoint, a model able to grade answers), or "
                          "set judge_check: warn in the experiment to run with it anyway.")
    return {"judge": name, "passed": False, "warning": f"{said} (judge_check: warn)"}
