"""memopt's own trackers, registered by name (`memopt.optimize.events.trackers`): ``mlflow`` and ``untracked``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memopt.optimize.events import tracker
from memopt.tracking.null import NullTracker
from memopt.tracking.runs import Tracker

if TYPE_CHECKING:
    from memopt.optimize.experiment import Experiment

__all__: list[str] = []


@tracker("mlflow")
def mlflow(experiment: Experiment) -> Tracker:
    """MLflow, as the experiment's ``mlflow`` section says (tracking URI, experiment name, prompt prefix)."""
    return Tracker(experiment.mlflow.tracking_uri, experiment.mlflow.experiment,
                   prompt_prefix=experiment.mlflow.prompt_prefix)


@tracker("untracked")
def untracked(experiment: Experiment) -> NullTracker:
    """A tracker that records nothing (dry runs, ``--estimate``, benches that compare optimizers)."""
    return NullTracker()
