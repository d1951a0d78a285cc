"""memopt's own optimizers, registered by name: ``memtrace``, ``score_only`` and ``gepa``.

- ``memtrace``: reflective rewriting of the blamed ops (`memopt.optimize.reflective`), any feedback kind;
- ``score_only``: the same optimizer reading the score only (feedback ``score``);
- ``gepa``: `dspy.GEPA` as one round (`memopt.optimize.gepa`), the feedback kinds declared ``gepa=True``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memopt.optimize.registry import Optimizer, optimizer

if TYPE_CHECKING:
    from memopt.optimize.experiment import Experiment
    from memopt.optimize.scoring import Scorer

__all__: list[str] = []


def _reflective(experiment: Experiment, scorer: Scorer) -> Optimizer:
    from memopt.optimize.reflective import ReflectiveOptimizer

    o = experiment.optimizer
    return ReflectiveOptimizer(scorer, candidates=o.candidates, ops_per_round=o.ops_per_round,
                               feedback=o.feedback_kind,
                               attribution=experiment.attribution.method, verify=experiment.attribution.verify,
                               trials=o.trials, trial_batch=o.trial_batch, search=dict(o.search), min_gain=o.min_gain,
                               seed=experiment.seed, sample=experiment.attribution.sample,
                               replay=experiment.attribution.replay, masked=experiment.attribution.masked,
                               stop_on_repeat=o.stop_on_repeat,
                               reuse_train=o.reuse_train, flagged=_flagged(experiment))


def _flagged(experiment: Experiment) -> frozenset[str]:
    """The cases the experiment's labels file (``attribution.labels``) flags as no memory failure."""
    from memopt.attribution.labels import load_labels

    path = experiment.attribution.labels
    return load_labels(path).flagged if path else frozenset()


@optimizer("memtrace")
def memtrace(experiment: Experiment, scorer: Scorer) -> Optimizer:
    """Reflective rewriting of the blamed ops' prompts, choosing among candidates with Optuna."""
    return _reflective(experiment, scorer)


@optimizer("score_only", feedback="score")
def score_only(experiment: Experiment, scorer: Scorer) -> Optimizer:
    """memtrace reading the score only (the control without any feedback text)."""
    return _reflective(experiment, scorer)


@optimizer("gepa", gepa_feedback=True)
def gepa(experiment: Experiment, scorer: Scorer) -> Optimizer:
    """`dspy.GEPA` as one memopt round, with attribution or outcome feedback."""
    from memopt.optimize.gepa import GepaOptimizer

    return GepaOptimizer(scorer, method=experiment.attribution.method, seed=experiment.seed,
                         feedback=experiment.optimizer.feedback_kind, flagged=_flagged(experiment))
