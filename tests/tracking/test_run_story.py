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
    assert run.data.metrics["result/test_f1.gain"] == pytest.approx(gain, abs=1e-6)
    assert run.data.metrics["result/test_f1.best"] == pytest.approx(summary["final"]["test_f1"])
    assert run.data.metrics["result/val_f1.baseline"] == pytest.approx(summary["baseline"]["val_f1"])
    note = run.data.tags["mlflow.note.content"]
    first = note.splitlines()[0]  # the result first: test F1 before → after (gain) in N calls
    assert (f"test F1 {summary['baseline']['test_f1']:.3f} → {summary['final']['test_f1']:.3f} ({gain:+.3f}) in "
            f"{summary['lm_calls']:,} calls") in first, first
    assert f"| gain | {summary['final']['val_f1'] - summary['baseline']['val_f1']:+.3f}" in note
    assert "round 1" in note and "round 2" in note and "traced_case.f1" in note
    assert re.search(r"-seed0-\d{8}-\d{6}$", run.info.run_name), run.info.run_name
    contexts = {t.value for d in run.inputs.dataset_inputs for t in d.tags if t.key == "mlflow.data.context"}
    assert contexts == {"train", "val", "test"}


def test_prompts_are_under_the_experiment_with_best_and_their_rounds(story):
    _, _, summary, client = story
    experiment_id = client.get_run(summary["run_id"]).info.experiment_id
    names = {p.name for p in client.search_prompts(filter_string=f"experiment_id = '{experiment_id}'")}
    assert names == {"story.mem0.extract", "story.mem0.update", "story.mem0.answer"}  # scoped by the experiment
    best_round = summary["final"]["round"]
    best_versions = next(r for r in summary["rounds"] if r["round"] == best_round)["prompt_versions"] \
        if best_round else None
    linked = json.loads(client.get_run(summary["run_id"]).data.tags["mlflow.linkedPrompts"])
    assert {p["name"] for p in linked} == names  # the best versions, on the parent run
    rounds_tag = f"memopt.rounds.{summary['run_id']}"
    for name in names:
        best = client.load_prompt(f"prompts:/{name}@best")
        if best_versions:
            assert int(best.version) == best_versions[name]
        assert best.tags["memopt.best.run"] == summary["run_id"]
        assert float(best.tags["memopt.best.val_f1"]) == pytest.approx(summary["final"]["val_f1"], abs=1e-6)
        assert "0" in client.get_prompt_version(name, 1).tags[rounds_tag].split(", ")  # round 0 ran version 1
    changed = [r for r in summary["rounds"] if r["commit_messages"]]
    assert changed, "no round changed a prompt"
    op, message = next(iter(changed[0]["commit_messages"].items()))
    version = client.get_prompt_version(f"story.mem0.{op}", changed[0]["prompt_versions"][f"story.mem0.{op}"])
    assert str(changed[0]["round"]) in version.tags[rounds_tag].split(", ")
    assert version.commit_message == _commit_message(message)  # the registry keeps at most 1,000 characters
    assert message.startswith(f"round {changed[0]['round']}: rewrote {op} after ")
    assert message.startswith(f"round {changed[0]['round']}: rewrote {op} after ") and "val F1" in message
    note = client.get_run(summary["run_id"]).data.tags["mlflow.note.content"]
    old = int(version.version) - 1  # the description opens the old version, so Compare shows it on the left
    assert f"{message} ([v{old} → v{version.version}](#/prompts/story.mem0.{op}?promptVersion={old}), then Compare)" \
        in note


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


def _rounds(client, summary) -> dict[int, object]:
    experiment_id = client.get_run(summary["run_id"]).info.experiment_id
    runs = client.search_runs([experiment_id], filter_string=f"tags.mlflow.parentRunId = '{summary['run_id']}'")
    return {int(r.data.tags["memopt.round"]): r for r in runs}


def test_each_proposal_is_a_reflection_trace_and_candidates_trials_cases_are_tables(story):
    import mlflow

    _, uri, summary, client = story
    mlflow.set_tracking_uri(uri)  # MLflow's load_table finds runs by the process-wide URI (conftest puts it back)
    rounds = _rounds(client, summary)
    experiment_id = client.get_run(summary["run_id"]).info.experiment_id
    ids = [r.info.run_id for r in rounds.values()]
    candidates = client.load_table(experiment_id, "candidates.json", run_ids=ids, extra_columns=["run_id"])
    trials = client.load_table(experiment_id, "trials.json", run_ids=ids)  # mlflow.load_table: the active one's
    cases = client.load_table(experiment_id, "cases.json", run_ids=ids)
    for index in range(1, len(rounds)):
        run = rounds[index]
        reflections = client.search_traces(locations=[experiment_id], run_id=run.info.run_id, include_spans=True,
                                           filter_string="tags.`memopt.kind` = 'reflection'")
        # one trace per call of the reflection LM: the round's reflection calls, counted by its usage meter
        calls = run.data.metrics["usage.reflection.calls"] - rounds[index - 1].data.metrics.get(
            "usage.reflection.calls", 0)
        assert len(reflections) == calls > 0, index
        mine = candidates[(candidates["round"] == index) & ~candidates["refused_by_check"]]
        assert set(mine["op"]) <= {t.info.tags["memopt.op"] for t in reflections}
        record = summary["rounds"][index - 1]
        assert len(mine) == len(record["candidates"])
        assert len(trials[trials["round"] == index]) == len(record["trials"])
        for trace in reflections:
            root = trace.data.spans[0]
            asked = "\n".join(m["content"] for m in root.inputs["messages"])
            answer = root.outputs["choices"][0]["message"]["content"]
            op = trace.info.tags["memopt.op"]
            texts = mine[mine["op"] == op]["text"].tolist()
            # a long reply is clipped in the trace (it ends "…"): there each candidate's first line must show
            line = -1 if not answer.endswith("…") else 0
            assert "feedback" in asked.lower() and all(text.splitlines()[line] in answer for text in texts), op
            assert trace.info.tags["memopt.prompt"] == f"story.mem0.{op}"
            assert set(mine[mine["op"] == op]["reflection_trace"]) <= {trace.info.trace_id}
        for _, row in mine[mine["kept"]].iterrows():  # a kept candidate is the version the round registered
            version = record["prompt_versions"][row["prompt"]]
            assert client.get_prompt_version(row["prompt"], version).template == row["text"].strip()
    last = max(rounds)
    final = cases[cases["round"] == last]
    assert set(final["split"]) == {"val", "test"}
    assert final[final["split"] == "val"]["f1"].mean() == pytest.approx(rounds[last].data.metrics["val.f1"], abs=1e-3)
    assert set(final["category_name"]) <= {"multi-hop", "temporal", "open-domain", "single-hop",
                                           "adversarial / abstention"}


def test_traces_one_row_per_case_per_round_that_ran_it_every_failure_attributed_or_labelled(story):
    cwd, _, summary, client = story
    rounds = _rounds(client, summary)
    experiment_id = client.get_run(summary["run_id"]).info.experiment_id
    seen = set()
    for index in range(1, len(rounds)):
        run = rounds[index]
        traces = client.search_traces(locations=[experiment_id], run_id=run.info.run_id, include_spans=False,
                                      filter_string="tags.`memopt.kind` = 'case'")
        keys = [(t.info.tags["memopt.case_id"], index) for t in traces]
        assert len(keys) == len(set(keys)) and not seen & set(keys)
        seen |= set(keys)
        round_md = Path(client.download_artifacts(run.info.run_id, "round.md", str(cwd / f"r{index}"))).read_text()
        assert "127.0.0.1:5000" not in round_md  # a sqlite store: links relative to the UI's own address
        if index > 1 and not summary["rounds"][index - 2]["accepted"]:  # same prompts: the last train run again
            assert traces == [] and f"round {index - 1} ran them" in round_md
            continue
        assert traces, index
        failed = [t for t in traces if t.info.tags["memopt.outcome"] == "failed"]
        unattributed = [t for t in failed if t.info.tags["memtrace.error_type"] == "unattributed"]
        assert all(t.info.tags.get("memopt.unattributed") for t in unattributed)
        if unattributed:  # drawn from the attributed failures first: none left
            spent = run.data.metrics
            assert len(failed) - len(unattributed) >= spent["attribution.attributed"] + spent["attribution.replayed"]
        for trace in failed:  # each failure names the prompt version its round produced for the blamed step
            after = trace.info.tags["memopt.prompt_after"].split(", ")
            produced = summary["rounds"][index - 1]["prompt_versions"]
            assert after and all(uri.removeprefix("prompts:/").rsplit("/", 1)[0] in produced for uri in after)
            assert all(produced[uri.removeprefix("prompts:/").rsplit("/", 1)[0]] == int(uri.rsplit("/", 1)[1])
                       for uri in after)
            if trace.info.tags["memtrace.blamed_op"] in ("extract", "update", "answer"):
                assert after == [f"prompts:/story.mem0.{trace.info.tags['memtrace.blamed_op']}/"
                                 f"{produced['story.mem0.' + trace.info.tags['memtrace.blamed_op']]}"]
        feedback = Path(client.download_artifacts(run.info.run_id, "feedback.md", str(cwd / f"f{index}"))).read_text()
        assert "prompts:/story.mem0." in feedback and "with prompt version prompts:/" in feedback


def test_round_runs_lead_with_their_scores_and_the_run_carries_its_code_version(story):
    import subprocess

    import memopt

    _, _, summary, client = story
    for index, run in _rounds(client, summary).items():
        note = run.data.tags["mlflow.note.content"]
        assert note.startswith(f"**round {index}: val F1 {run.data.metrics['val.f1']:.3f}"), note[:80]
        names = [k for k in run.data.metrics if ".by_category." in k]
        assert names and all(re.search(r"\.by_category\.\d+-[a-z-]+\.", k) for k in names), names
        keys = list(run.data.metrics)
        assert keys.index("val.f1") < keys.index("lm_calls"), keys[:8]  # the scores before the bookkeeping
    tags = client.get_run(summary["run_id"]).data.tags
    assert tags["memopt.version"] == memopt.__version__
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:  # a checkout: the commit memopt ran from
        assert tags["mlflow.source.git.commit"] == head.stdout.strip()
