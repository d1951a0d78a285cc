"""The MLflow UI shows a round's traces with their assessments (headless Chromium on a real ``mlflow server``).

Slow: a one-round quickstart, an MLflow server and a browser. Needs Debian's ``/usr/bin/chromium``;
without it the test skips with the reason, except under CI (``CI=true``), where it fails.
The same code writes the screenshots of docs/mlflow.md: ``python tests/scripts/mlflow_traces_screenshot.py``.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest

from tests.scripts.mlflow_traces_screenshot import ATTRIBUTION, CHROMIUM, capture, one_round_store

pytestmark = pytest.mark.slow


def _need_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    reason = f"{CHROMIUM} is not installed (apt-get install chromium)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the MLflow UI test, but {reason}")
    pytest.skip(reason)


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", data[16:24])


def test_traces_page_of_a_round_shows_its_assessments(tmp_path):
    import mlflow

    _need_chromium()
    store = tmp_path / "store"
    store.mkdir()
    shot = capture(one_round_store(store), tmp_path / "png")
    client = mlflow.MlflowClient(f"sqlite:///{store / 'mlflow.db'}")
    traces = client.search_traces(locations=[shot["experiment"]], run_id=shot["run"], include_spans=False,
                                  filter_string="tags.`memopt.kind` = 'case'")
    types = {a.value for t in traces for a in t.info.assessments if a.name == ATTRIBUTION}
    assert len(traces) == 12 and {"UpdateError", "ExtractionError"} <= types
    for column in (ATTRIBUTION, "traced_case.judge", "traced_case.f1", "Expected output", *types):
        assert column in shot["table"], column
    blame = next(a for a in client.get_trace(shot["trace"], display=False).info.assessments if a.name == ATTRIBUTION)
    assert shot["error_type"] == blame.value == "UpdateError"
    for text in (shot["span"], "Assessments", blame.rationale, "memopt.attribution.memtrace"):
        assert text in shot["detail"], text
    assert [_png_size(p) for p in shot["pngs"]] == [(2000, 1100)] * 7
    parent = client.get_run(shot["parent"])
    metrics = parent.data.metrics
    # the runs list shows the result columns, with this run's values, without a click
    for column in ("result/test_f1.baseline", "result/test_f1.best", "result/test_f1.gain"):
        assert column in shot["runs"] and f"{metrics[column]:.4g}"[:5] in shot["runs"], column
    # the run page opens on the result: its first visible line is "test F1 a → b (+g) in N calls"
    summary = json.loads((store / "summary.json").read_text())
    assert shot["first_line"].startswith(
        f"test F1 {summary['baseline']['test_f1']:.3f} → {summary['final']['test_f1']:.3f} "
        f"({summary['gain']['test_f1']:+.3f}) in {summary['lm_calls']:,} calls"), shot["first_line"]
    chart = shot["chart"]  # the result section first (baseline, best, gain), then the rounds' curves
    assert chart.index("result") < chart.index("test_f1.best") < chart.index("rounds"), chart[-600:]
    best = client.load_prompt(f"prompts:/{shot['prompt_name']}@best")
    for text in ("best", "Commit message", best.commit_message):
        assert text in shot["prompt"], text
    reflection = client.get_trace(shot["reflection"])  # a proposal: what the reflection LM was asked and answered
    for text in ("System", "User", "Assistant", reflection.info.tags["mlflow.traceName"], "candidate "):
        assert text in shot["reflection_page"], text
