"""Resuming an optimization: the checkpoint of the run to continue, checked to fit the experiment.

`load_checkpoint` reads the parent run's last checkpoint (``state/state.json``) and the experiment it
was started with (``experiment.json``), and refuses a resume that would change what the run is: another
pipeline, other data (the fingerprint of every split), or other round settings (``ROUND_SETTINGS``:
optimizer, attribution method, seed), each error naming the old and the new value. The budget and the
number of rounds may change. It only reads, through the run's tracker (`memopt.optimize.events.Tracker`:
`run_params`, `read_artifact`); the tracker reattaches afterwards.
"""

from __future__ import annotations

import tempfile
from typing import TYPE_CHECKING, Any

from memopt.core.errors import ConfigError, DataError
from memopt.core.files import read_json
from memopt.lm.redaction import redact_tree
from memopt.optimize.experiment import Experiment
from memopt.optimize.state import OptimizeState

if TYPE_CHECKING:
    from memopt.optimize.events import Tracker

__all__ = ["load_checkpoint", "STATE_ARTIFACT", "EXPERIMENT_ARTIFACT", "ROUND_SETTINGS"]

STATE_ARTIFACT = "state/state.json"
EXPERIMENT_ARTIFACT = "experiment.json"
# What a round does depends on these experiment settings; a resume must not change them.
ROUND_SETTINGS = ("optimizer", "attribution", "seed")


def load_checkpoint(tracker: Tracker, run_id: str, experiment: Experiment, data_name: str,
                fingerprint: str) -> OptimizeState | None:
    """The last checkpoint of the run to resume (None when its round 0 never finished), checked to fit the
    experiment: same pipeline, same data. Reads only; `Tracker.resume` reattaches afterwards."""
    params = tracker.run_params(run_id)  # a tracker without a store cannot resume: it says so
    state, recorded_experiment = None, None
    with tempfile.TemporaryDirectory() as tmp:
        path = tracker.read_artifact(run_id, STATE_ARTIFACT, tmp)
        if path is not None:
            raw = read_json(path, missing="the checkpoint of the run is missing.")
            try:
                state = OptimizeState.from_dict(raw)
            except (TypeError, KeyError, AttributeError) as e:
                raise DataError(f"--resume {run_id}: its checkpoint {STATE_ARTIFACT} is damaged ({e}).") from None
        path = tracker.read_artifact(run_id, EXPERIMENT_ARTIFACT, tmp)
        if path is not None:
            recorded_experiment = read_json(path, missing="the experiment of the run is missing.")
    pipeline = state.pipeline if state is not None else params.get("pipeline")
    if pipeline != experiment.pipeline:
        raise ConfigError(f"--resume {run_id}: that run optimized {pipeline!r}, the experiment is "
                          f"{experiment.pipeline!r}.")
    recorded = (state.data, state.data_fingerprint) if state is not None and state.data_fingerprint else \
        (params.get("data"), params.get("data.fingerprint"))
    if recorded[1] is not None and recorded[1] != fingerprint or recorded[1] is None and recorded[0] != data_name:
        raise ConfigError(f"--resume {run_id}: that run optimized on data {recorded[0]!r} (fingerprint "
                          f"{recorded[1] or 'not recorded'}), this experiment has {data_name!r} (fingerprint "
                          f"{fingerprint}); resume with the run's --data, or start a new run.")
    if isinstance(recorded_experiment, dict):
        _check_drift(run_id, recorded_experiment, experiment)
    return state


def _check_drift(run_id: str, recorded: dict[str, Any], experiment: Experiment) -> None:
    """Refuse a resume whose settings would change what a round does (``ROUND_SETTINGS``), naming old and new.

    Keys the recorded experiment lacks (settings added since it ran) are not compared; the budget and the
    number of rounds may change (a resume is how a run gets more of either).
    """
    now = redact_tree(experiment.model_dump(mode="json"))  # the record's URIs are masked: compared masked
    changed = []
    for section in ROUND_SETTINGS:
        old, new = redact_tree(recorded.get(section)), now[section]
        if isinstance(new, dict) and isinstance(old, dict):
            changed += [f"{section}.{key} {old[key]!r} → {value!r}" for key, value in new.items()
                        if key in old and old[key] != value]
        elif section in recorded and old != new:
            changed.append(f"{section} {old!r} → {new!r}")
    if changed:
        raise ConfigError(f"--resume {run_id}: that run's rounds were made with other settings ({'; '.join(changed)});"
                          " resume with the run's settings (experiment file and overrides), or start a new run.")
