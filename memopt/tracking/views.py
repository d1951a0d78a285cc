"""Where a run is seen in the MLflow UI: the experiment's runs list with the result columns, and the links to it.

MLflow's runs list shows no metric until someone picks it under **Columns**. A *shared view* is how the UI
opens with columns already chosen: an experiment tag ``mlflow.sharedViewState.<key>`` holding the view
(selected columns, their widths), opened by ``#/experiments/<id>/runs?viewStateShareKey=<key>``.
`share_result_view` sets the view `RESULT_VIEW`: each run's test and val F1 at baseline, best and gain
(`memopt.optimize.story.result_metrics`), then its LM calls and data; `runs_page` is the link that opens it.

`ui_base` is the address of the UI for links written into artifacts: the tracking URI itself when it is a
server, else none (links are then relative, ``#/experiments/...``: the UI resolves them against its own
address, whatever host and port it was started on).
"""

from __future__ import annotations

import json
from typing import Any

from memopt.tracking.store import shown_uri

__all__ = ["RESULT_VIEW", "RESULT_COLUMNS", "share_result_view", "runs_page", "ui_base"]

RESULT_VIEW = "memopt-result"  # the share key of the view
RESULT_COLUMNS = ("result/test_f1.baseline", "result/test_f1.best", "result/test_f1.gain", "result/val_f1.best",
                  "lm_calls")
_STATE_TAG = "mlflow.sharedViewState."  # MLflow's experiment tag of a shared view (its UI's constant)


def _view() -> str:
    """The view's state: the columns (MLflow applies widths to the columns it is given an order for)."""
    columns = [f"metrics.`{name}`" for name in RESULT_COLUMNS] + ["attributes.`Dataset`"]
    widths = {c: 8 * len(c.split("`")[1]) + 24 for c in columns[:-1]}
    return json.dumps({"selectedColumns": columns, "columnOrder": columns, "columnWidths": widths},
                      separators=(",", ":"))


def share_result_view(client: Any, experiment_id: str) -> None:
    """Set (or update) the experiment's shared view `RESULT_VIEW` (see the module docstring)."""
    view = _view()
    if client.get_experiment(experiment_id).tags.get(_STATE_TAG + RESULT_VIEW) != view:
        client.set_experiment_tag(experiment_id, _STATE_TAG + RESULT_VIEW, view)


def runs_page(experiment_id: str, base: str = "") -> str:
    """The link that opens an experiment's runs with the result columns (relative without ``base``)."""
    return f"{base}#/experiments/{experiment_id}/runs?viewStateShareKey={RESULT_VIEW}"


def ui_base(tracking_uri: str) -> str:
    """The MLflow UI's address for links in artifacts: a server's tracking URI (password masked, ``/`` ended), else
    ``""`` (relative links)."""
    if tracking_uri.startswith(("http://", "https://")):
        return shown_uri(tracking_uri).rstrip("/") + "/"
    return ""
