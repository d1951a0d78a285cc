"""An optimize run tells its story in MLflow: read back through the MLflow client, never from memopt's own objects.

A two-round run on a small synthetic set (SimLM) on a fresh sqlite store: the parent run's per-round
metric history, description and gain; the prompts found by experiment with ``@best``; traces tagged
with the blamed op; the candidates and decisions in ``summary.json`` and ``round.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memopt.tracking.prompts import _commit_message
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
pytestmark = pytest.mark.slow  # a two-round optimization (CI runs it with -m slow)


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """A small two-round quickstart on a fresh store: (cwd, uri, summary, MLflow client)."""
    import mlflow
    from mlflow.tracking._tracking_service.utils import _use_tracking_uri

    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import run_experiment

    cwd = tmp_path_factory.mktemp("story")
    uri = f"sqlite:///{cwd}/mlflow.db"
    experiment = load_experiment(QUICKSTART, {
        "rounds": 2, "mlflow.tracking_uri": uri, "mlflow.experiment": "story",
        "data.source": "synthetic:conversations=8,sessions=5,seed=3", "optimizer.trials": 4,
        "optimizer.candidates": 2})
    with pytest.MonkeyPatch.context() as mp, _use_tracking_uri(uri):
        mp.chdir(cwd)
        summary = run_experiment(experiment)
    return cwd, uri, summary, mlflow.MlflowClient(uri)


def test_parent_run_has_per_round_curves_gain_and_a_description(story):
    _, _, summary, client = story
    run = client.get_run(summary["run_id"])
    history = client.get_metric_history(run.info.run_id, "rounds/val.f1")
    assert [m.step for m in sorted(history, key=lambda m: m.step)] == [0, 1, 2]
    by_step = {m.step: m.value for m in history}
    assert by_step[0] == pytest.approx(summary["baseline"]["val_f1"])
    assert by_step[2] == pytest.approx(summary["rounds"][-1]["val_f1"])
    assert {m.step for m in client.get_metric_history(run.info.run_id, "rounds/test.judge")} == {0, 1, 2}
    gain = summary["final"]["test_f1"] - summary["baseline"]["test_f1"]
    assert run.data.metrics["summary/gain.test_f1"] == pytest.approx(gain, abs=1e-6)
    assert run.data.metrics["summary/baseline.val_f1"] == pytest.approx(summary["baseline"]["val_f1"])
    note = run.data.tags["mlflow.note.content"]
    assert f"| gain | {summary['final']['val_f1'] - summary['baseline']['val_f1']:+.3f}" in note
    assert "round 1" in note and "round 2" in note and "traced_case.f1" in note
    assert re.search(r"-seed0-\d{8}-\d{6}$", run.info.run_name), run.info.run_name
    contexts = {t.value for d in run.inputs.dataset_inputs for t in d.tags if t.key == "mlflow.data.context"}
    assert contexts == {"train", "val", "test"}


def test_prompts_are_under_the_experiment_with_best_and_round_aliases(story):
    _, _, summary, client = story
    experiment_id = client.get_run(summary["run_id"]).info.experiment_id
    names = {p.name for p in client.search_prompts(filter_string=f"experiment_id = '{experiment_id}'")}
    assert names == {"mem0.extract", "mem0.update", "mem0.answer"}
    best_round = summary["final"]["round"]
    best_versions = next(r for r in summary["rounds"] if r["round"] == best_round)["prompt_versions"] \
        if best_round else None
    linked = json.loads(client.get_run(summary["run_id"]).data.tags["mlflow.linkedPrompts"])
    assert {p["name"] for p in linked} == names  # the best versions, on the parent run
    for name in names:
        best = client.load_prompt(f"prompts:/{name}@best")
        if best_versions:
            assert int(best.version) == best_versions[name]
        assert int(client.load_prompt(f"prompts:/{name}@round-0").version) == 1
    changed = [r for r in summary["rounds"] if r["commit_messages"]]
    assert changed, "no round changed a prompt"
    op, message = next(iter(changed[0]["commit_messages"].items()))
    version = client.load_prompt(f"prompts:/mem0.{op}@round-{changed[0]['round']}")
    assert version.commit_message == _commit_message(message)  # the registry keeps at most 1,000 characters
    assert message.startswith(f"round {changed[0]['round']}: rewrote {op} after ")
    assert message.startswith(f"round {changed[0]['round']}: rewrote {op} after ") and "val F1" in message
    note = client.get_run(summary["run_id"]).data.tags["mlflow.note.content"]
    old = int(version.version) - 1  # the description opens the old version, so Compare shows it on the left
    assert f"{message} ([v{old} → v{version.version}](#/prompts/mem0.{op}?promptVersion={old}), then Compare)" in note


def test_traces_carry_the_blamed_op_as_a_filterable_tag_and_a_plain_rationale(story):
    _, _, summary, client = story
    experiment_id = client.get_run(summary["run_id"]).info.experiment_id
    traces = client.search_traces(locations=[experiment_id], include_spans=False)
    blamed = [t for t in traces if t.info.tags.get("memtrace.blamed_op") not in (None, "none")]
    assert blamed, "no trace names a blamed op"
    trace = blamed[0]
    attribution = next(a for a in trace.info.assessments if a.name == "memtrace.attribution")
    assert trace.info.tags["memtrace.blamed_op"] == attribution.metadata["operation"]
    assert trace.info.tags["memtrace.error_type"] == attribution.value
    assert not re.search(r"\b(memory|fact|turn):[\w:.-]+@\d", attribution.rationale), attribution.rationale
    assert f"The {attribution.metadata['operation']} step" in attribution.rationale and "“" in attribution.rationale
    op = trace.info.tags["memtrace.blamed_op"]
    found = client.search_traces(locations=[experiment_id], filter_string=f"tags.`memtrace.blamed_op` = '{op}'",
                                 include_spans=False)
    assert {t.info.trace_id for t in found} == {t.info.trace_id for t in traces
                                                if t.info.tags.get("memtrace.blamed_op") == op}
    assert {a.name for t in traces for a in t.info.assessments} >= {"traced_case.f1"}


def test_summary_and_round_md_list_every_candidate_and_why_the_round_decided(story):
    cwd, _, summary, client = story
    for r in summary["rounds"]:
        assert r["candidates"], r["round"]
        assert all({"op", "candidate", "diff", "val_f1", "knobs"} <= set(c) for c in r["candidates"])
        assert len(r["trials"]) >= 2 and all("val_f1" in t and "knobs" in t for t in r["trials"])
        assert r["decision"].startswith("kept trial" if r["accepted"] else "kept the current prompts")
        assert "top_k" in r["knobs"]
    run = client.get_run(summary["run_id"])
    [one] = client.search_runs([run.info.experiment_id], filter_string="tags.`memopt.round` = '1'")
    text = Path(client.download_artifacts(one.info.run_id, "round.md", str(cwd))).read_text()
    first = summary["rounds"][0]
    assert f"- decision: {first['decision']}" in text
    for c in first["candidates"]:
        assert f"## Candidate {c['op']} #{c['candidate']}:" in text
    assert "{'" not in text.split("## Candidate")[0], "raw Python dicts in the round's header"
    assert json.loads(json.dumps(summary))  # the summary stays JSON
