"""`memopt optimize`: experiment files, feedback, the reflective loop, MLflow rounds, resume, export round trip."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from memopt.core.errors import ConfigError
from memopt.feedback.build import score_feedback
from memopt.optimize.experiment import load_experiment
from memopt.simlm.reflect import read_evidence
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
SECRET = "sk-test-SECRET-4242"


def _memopt(*args: str, cwd: Path, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "memopt", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env={**os.environ, **(env or {})})


def _small(tmp_path: Path) -> Path:
    text = QUICKSTART.read_text().replace("conversations=12,sessions=8", "conversations=8,sessions=6")
    path = tmp_path / "small.yaml"
    path.write_text(text)
    return path


def test_experiment_files_are_validated_with_the_key_named(tmp_path):
    experiment = load_experiment(QUICKSTART)
    assert experiment.pipeline == "mem0" and experiment.optimizer.name == "memtrace"
    assert load_experiment(QUICKSTART, {"rounds": 2, "optimizer.name": "gepa"}).optimizer.name == "gepa"
    bad = tmp_path / "bad.yaml"
    bad.write_text("pipeline: mem0\noptimizer:\n  candidates: 0\n  nmae: x\n")
    with pytest.raises(ConfigError) as err:
        load_experiment(bad)
    message = str(err.value)
    assert "bad.yaml" in message and "optimizer.candidates" in message and "optimizer.nmae" in message
    bad.write_text("pipeline: rag\noptimizer: {search: {topk: [1, 2]}}\n")
    with pytest.raises(ConfigError, match="topk not a knob of rag"):
        load_experiment(bad)
    bad.write_text("pipeline: [\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_experiment(bad)
    with pytest.raises(ConfigError, match="no such experiment file"):
        load_experiment(tmp_path / "missing.yaml")
    # a key written twice: plain YAML keeps the last one silently, so a forgotten line would override the edit
    bad.write_text("pipeline: mem0\noptimizer:\n  candidates: 2\n  trials: 3\n  candidates: 4\nrounds: 2\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: .*'candidates' is written twice .*lines 3 and 5"):
        load_experiment(bad)
    bad.write_text("base: &b {candidates: 2, trials: 3}\npipeline: mem0\noptimizer:\n  <<: *b\n  candidates: 4\n")
    with pytest.raises(ConfigError, match=r"bad.yaml: base: Extra inputs"):  # an override of a merge is no twin
        load_experiment(bad)


def test_every_shipped_experiment_loads():
    files = sorted((ROOT / "experiments").glob("*.yaml"))
    assert {f.stem for f in files} >= {"quickstart", "long_context", "rag", "mem0", "evermemos", "locomo_mem0"}
    for path in files:
        load_experiment(path)


def test_score_only_feedback_gives_reflection_no_example():
    feedback = score_feedback("extract", {"f1": 0.31, "judge": 0.2, "n": 120}, "abc").text()
    assert "0.310" in feedback
    for kind in ("extract", "update", "answer"):
        evidence = read_evidence(kind, feedback)
        assert evidence.examples == 0 and evidence.weights == {} and evidence.strength == 0


def test_feedback_kind_is_an_optimizer_option_and_score_only_an_alias(tmp_path):
    assert load_experiment(QUICKSTART).optimizer.feedback_kind == "attribution"
    assert load_experiment(QUICKSTART, {"optimizer.name": "score_only"}).optimizer.feedback_kind == "score"
    assert load_experiment(QUICKSTART, {"optimizer.feedback": "misleading"}).optimizer.feedback_kind == "misleading"
    assert load_experiment(QUICKSTART, {"optimizer.name": "gepa", "optimizer.feedback": "outcome"}).optimizer.name
    for bad in ({"optimizer.name": "score_only", "optimizer.feedback": "outcome"},
                {"optimizer.name": "gepa", "optimizer.feedback": "empty"}, {"optimizer.feedback": "vague"}):
        with pytest.raises(ConfigError, match="quickstart.yaml: optimizer"):
            load_experiment(QUICKSTART, bad)


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory):
    """The README's main job, end to end, on a fresh MLflow store (with a fake API key in the environment)."""
    cwd = tmp_path_factory.mktemp("quickstart")
    done = _memopt("optimize", str(QUICKSTART), "--out", "summary.json", cwd=cwd,
                   env={"OPENAI_API_KEY": SECRET, "DB_PASSWORD": "user"})  # an unrelated short variable
    assert done.returncode == 0, done.stderr[-3000:]
    return cwd, json.loads((cwd / "summary.json").read_text()), done


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_quickstart_raises_test_f1_by_ten_points(quickstart):
    _, summary, done = quickstart
    assert summary["final"]["test_f1"] - summary["baseline"]["test_f1"] >= 0.10
    assert len(summary["rounds"]) == 4 and any(r["accepted"] for r in summary["rounds"])
    assert all(set(r) >= {"round", "val_f1", "test_f1", "blamed_ops", "accepted", "prompt_versions"}
               for r in summary["rounds"])
    assert "mlflow server --backend-store-uri" in done.stdout and summary["run_id"] in done.stdout


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_quickstart_logs_parent_rounds_and_prompt_versions(quickstart):
    import mlflow

    cwd, summary, _ = quickstart
    client = mlflow.MlflowClient(f"sqlite:///{cwd}/mlflow.db")
    parent = client.get_run(summary["run_id"])
    assert parent.data.params["lm.simulated"] == "True" and parent.data.params["pipeline"] == "mem0"
    rounds = client.search_runs([parent.info.experiment_id],
                                filter_string=f"tags.mlflow.parentRunId = '{summary['run_id']}'")
    assert sorted(int(r.data.tags["memopt.round"]) for r in rounds) == [0, 1, 2, 3, 4]
    assert all(r.info.status == "FINISHED" for r in rounds)
    one = next(r for r in rounds if r.data.tags["memopt.round"] == "1")
    assert "val.f1" in one.data.metrics and "failures.ExtractionError" in one.data.metrics
    artifacts = {a.path for a in client.list_artifacts(one.info.run_id)}
    assert {"attributions.jsonl", "feedback.md", "round.md", "graphs"} <= artifacts
    versions = list(client.search_prompt_versions("memopt-quickstart.mem0.extract"))  # the experiment's scope
    assert len(versions) >= 2
    newest = max(versions, key=lambda v: v.version)
    assert newest.tags["round"] != "0" and newest.tags["parent_version"] != "none"


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_no_api_key_reaches_mlflow(quickstart):
    import mlflow

    cwd, summary, _ = quickstart
    client = mlflow.MlflowClient(f"sqlite:///{cwd}/mlflow.db")
    runs = client.search_runs([client.get_run(summary["run_id"]).info.experiment_id])
    for run in runs:
        assert SECRET not in json.dumps(run.data.params) + json.dumps(run.data.tags) + json.dumps(run.data.metrics)
    for path in (cwd / "mlruns").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_export_round_trip_reproduces_the_runs_val_f1(quickstart, tmp_path):
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.optimize.loop import splits_of

    cwd, summary, _ = quickstart
    done = _memopt("export", summary["run_id"], "--format", "text", "--out", str(tmp_path / "tuned"), cwd=cwd)
    assert done.returncode == 0, done.stderr
    mem0 = _memopt("export", summary["run_id"], "--format", "mem0", "--out", str(tmp_path / "mem0.json"), cwd=cwd)
    assert mem0.returncode == 0, mem0.stderr
    config = json.loads((tmp_path / "mem0.json").read_text())
    assert {"custom_fact_extraction_prompt", "custom_update_memory_prompt"} <= set(config)
    assert "0 blocking" in done.stdout and "0 blocking" in mem0.stdout  # the prompt check ran, on the run's data
    exported = (tmp_path / "tuned" / "mem0" / "extract.md").read_text()
    assert "User: Hi." in exported and "***" not in exported  # DB_PASSWORD=user masked nothing
    knobs = yaml.safe_load((tmp_path / "tuned" / "mem0" / "knobs.yaml").read_text())
    assert knobs["knobs"] == summary["best_knobs"] and knobs["run_id"] == summary["run_id"]
    assert config["memopt"]["knobs"] == summary["best_knobs"]
    assert config["memopt"]["search"]["limit"] == summary["best_knobs"]["top_k"]
    experiment = load_experiment(QUICKSTART)
    _, _, val, _ = splits_of(experiment)
    result = run_pipeline("mem0", experiment.data.source, prompts=tmp_path / "tuned",
                          conversations=[c.sample_id for c in val], judge_lm=None,
                          knobs=knobs["knobs"])  # the exported knobs alone reproduce the run
    assert result.metrics["f1"] == pytest.approx(summary["final"]["val_f1"], abs=1e-4)
    ran = _memopt("run", "-p", "mem0", "--data", experiment.data.source, "--prompts", str(tmp_path / "tuned"),
                  "--conversations", ",".join(c.sample_id for c in val), "--out", str(tmp_path / "val.json"), cwd=cwd)
    assert ran.returncode == 0 and "knobs from " in ran.stderr, ran.stderr  # `memopt run` takes knobs.yaml itself
    val_f1 = json.loads((tmp_path / "val.json").read_text())["metrics"]["f1"]
    assert val_f1 == pytest.approx(summary["final"]["val_f1"], abs=1e-4)


def _finished_rounds(uri: str, experiment: str) -> int:
    import mlflow

    client = mlflow.MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return 0
    runs = client.search_runs([found.experiment_id], filter_string="tags.`memopt.kind` = 'round'")
    return sum(r.info.status == "FINISHED" for r in runs)


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_kill_mid_run_then_resume(tmp_path):
    experiment = _small(tmp_path)
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    process = subprocess.Popen([sys.executable, "-m", "memopt", "optimize", str(experiment), "--rounds", "3",
                                "--tracking-uri", uri], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 180
    while _finished_rounds(uri, "memopt-quickstart") < 2 and time.time() < deadline:
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        time.sleep(0.3)
    process.send_signal(signal.SIGKILL)
    process.wait()
    import mlflow

    client = mlflow.MlflowClient(uri)
    exp_id = client.get_experiment_by_name("memopt-quickstart").experiment_id
    [parent] = client.search_runs([exp_id], filter_string="tags.`memopt.kind` = 'optimize'")
    resumed = _memopt("optimize", str(experiment), "--rounds", "3", "--tracking-uri", uri, "--resume",
                      parent.info.run_id, "--out", "summary.json", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [r["round"] for r in summary["rounds"]] == [1, 2, 3] and summary["run_id"] == parent.info.run_id
    rounds = client.search_runs([exp_id], filter_string=f"tags.mlflow.parentRunId = '{parent.info.run_id}'")
    finished = sorted(int(r.data.tags["memopt.round"]) for r in rounds if r.info.status == "FINISHED")
    assert finished == [0, 1, 2, 3]
    assert all(r.info.status in ("FINISHED", "KILLED") for r in rounds)
    assert client.get_run(parent.info.run_id).info.status == "FINISHED"


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_gepa_runs_within_its_budget(tmp_path):
    experiment = _small(tmp_path)
    done = _memopt("optimize", str(experiment), "--optimizer", "gepa", "--budget", "1500", "--rounds", "1",
                   "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db", "--out", "summary.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert len(summary["rounds"]) == 1 and summary["lm_calls"] <= 1500 * 1.2
    assert summary["final"]["val_f1"] >= summary["baseline"]["val_f1"]


def test_a_batch_asks_no_more_trials_than_on_batch_allows():
    from memopt.optimize.select import select

    scored: list[dict] = []
    allowed = iter([2, 0])

    def score(instructions: dict, knobs: dict) -> float:
        scored.append(instructions)
        return 0.5 + 0.01 * len(scored)

    choice = select({"answer": ["A1", "A2", "A3"]}, {"top_k": [5, 10]}, {"top_k": 5}, score, current_f1=0.4,
                    trials=8, seed=0, batch=4, on_batch=lambda size, first: min(size, next(allowed)))
    assert choice.trials == 2 and len(choice.tried) == 2  # the first batch shrank to 2 trials, the second stopped
    assert len(scored) == 1  # trial 1 is the current configuration, whose score is known


@pytest.mark.slow  # a 6,000-call optimization (CI runs it with -m slow)
def test_the_trials_of_the_last_round_stay_within_the_budget():
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import NullTracker

    # Outcome feedback's third round starts with 1,340 calls left; batches of 4 trials once took it to 6,174.
    experiment = load_experiment(QUICKSTART, {"optimizer.feedback": "outcome", "budget.max_lm_calls": 6000,
                                              "rounds": 8})
    summary = run_experiment(experiment, tracker=NullTracker())
    assert summary["stopped"].startswith("budget exhausted") and len(summary["rounds"]) == 3
    assert len(summary["rounds"][-1]["trials"]) >= 2  # the budget left still bought trials
    assert summary["lm_calls"] <= 6000


def test_a_run_spends_and_finds_the_same_after_another_run_in_the_process(tmp_path):
    """Memory states cached by an earlier run (a bench's runs share one process) are not served to the next: the
    second of two identical runs spends the calls of the first and ends where it ends, as a fresh process would."""
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import NullTracker

    experiment = load_experiment(_small(tmp_path), {"optimizer.feedback": "outcome", "rounds": 1,
                                                    "data.source": "synthetic:conversations=4,sessions=4,seed=0",
                                                    "optimizer.trials": 2})
    first, second = (run_experiment(experiment, tracker=NullTracker()) for _ in range(2))
    assert second["lm_calls"] == first["lm_calls"]
    assert [r["lm_calls"] for r in second["rounds"]] == [r["lm_calls"] for r in first["rounds"]]
    assert second["final"] == first["final"]
