"""MLflow tracking on a real sqlite store: parent and round runs, metrics, prompt registry, secret hygiene."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError
from memopt.tracking import Tracker, resolve_tracking_uri, run_info

SECRET = "sk-test-SECRET123"


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory) -> Path:
    """An initialised, empty MLflow sqlite store, created once (≈2 s) and copied by each test."""
    import mlflow

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    mlflow.MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


@pytest.fixture
def store(tmp_path, monkeypatch, empty_db) -> str:
    """The tracking URI of a fresh store in ``tmp_path``, with the working directory there (``./mlruns``)."""
    shutil.copy(empty_db, tmp_path / "mlflow.db")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return f"sqlite:///{tmp_path}/mlflow.db"


def test_tracking_uri_resolution_order(monkeypatch):
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert resolve_tracking_uri() == "sqlite:///mlflow.db"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:///from-env.db")
    assert resolve_tracking_uri() == "sqlite:///from-env.db"
    assert resolve_tracking_uri("http://127.0.0.1:5000") == "http://127.0.0.1:5000"


def test_parent_run_with_two_rounds_metrics_and_prompt_versions(store, tmp_path):
    import mlflow

    tracker = Tracker(store, experiment="exp-a")
    run_id = tracker.start("mem0-memtrace", {"pipeline": "mem0", "budget": 2, "long": "x" * 10_000},
                           tags={"team": "memopt"})
    prompts = {"extract": "Extract facts.", "update": "Decide updates.", "answer": "Answer briefly."}
    with tracker.round(1) as r1:
        r1.log_metrics({"val": {"f1": 0.4, "by_category": {"2": {"f1": 0.1, "judge": None}}}}, step=1)
        v1 = r1.register_prompts("mem0", prompts, commit_message="seed prompts", round_index=1)
    with tracker.round(2) as r2:
        r2.log_metrics({"val": {"f1": 0.6, "by_category": {"2": {"f1": 0.5}}}}, step=2)
        changed = {**prompts, "update": "Decide updates; keep compatible facts. " + "why " * 300}
        v2 = r2.register_prompts("mem0", changed, commit_message="UpdateError x3: " + "lost facts " * 100,
                                 round_index=2)
        again = r2.register_prompts("mem0", changed, commit_message="no change", round_index=2)
    tracker.log_metrics({"best.f1": 0.6}, step=2)
    tracker.finish()

    assert v1 == {"exp-a.mem0.answer": 1, "exp-a.mem0.extract": 1, "exp-a.mem0.update": 1}
    assert v2 == again == {"exp-a.mem0.answer": 1, "exp-a.mem0.extract": 1, "exp-a.mem0.update": 2}
    client = mlflow.MlflowClient(store)
    assert [int(v.version) for v in client.search_prompt_versions("exp-a.mem0.extract")] == [1]
    update_v2 = client.get_prompt_version("exp-a.mem0.update", 2)
    assert update_v2.tags["round"] == "2" and update_v2.tags["parent_version"] == "1"
    assert client.get_prompt_version("exp-a.mem0.update", 1).tags["parent_version"] == "none"
    assert update_v2.template == changed["update"].strip()
    assert 0 < len(update_v2.commit_message) <= 1000 and update_v2.commit_message.startswith("UpdateError x3")

    experiment = client.get_experiment_by_name("exp-a")
    nested = mlflow.search_runs([experiment.experiment_id], f"tags.mlflow.parentRunId = '{run_id}'",
                                order_by=["attributes.start_time ASC"], output_format="list")
    assert [r.info.run_name for r in nested] == ["round-1", "round-2"]
    assert [r.data.tags["memopt.round"] for r in nested] == ["1", "2"]
    assert {r.info.status for r in nested} == {"FINISHED"}
    linked = json.loads(nested[1].data.tags["mlflow.linkedPrompts"])
    assert {(p["name"], str(p["version"])) for p in linked} == {
        ("exp-a.mem0.answer", "1"), ("exp-a.mem0.extract", "1"), ("exp-a.mem0.update", "2")}
    history = client.get_metric_history(nested[1].info.run_id, "val.by_category.2.f1")
    assert [(m.step, m.value) for m in history] == [(2, 0.5)]
    assert "val.by_category.2.judge" not in nested[0].data.metrics
    assert nested[0].data.metrics["val.f1"] == 0.4

    info = run_info(run_id, store)
    assert info["status"] == "FINISHED" and info["tags"]["memopt.kind"] == "optimize"
    assert info["tags"]["team"] == "memopt" and info["params"]["budget"] == "2"
    assert len(info["params"]["long"]) == 6000 and info["metrics"]["best.f1"] == 0.6
    assert experiment.artifact_location.startswith(str(tmp_path / "mlruns"))
    hint = tracker.ui_hint()
    assert f"mlflow server --backend-store-uri {store} --port 5000 --workers 1" in hint and run_id in hint


def test_failing_round_is_failed_and_the_error_propagates(store):
    import mlflow

    tracker = Tracker(store)
    run_id = tracker.start("run", {"pipeline": "rag"})
    with pytest.raises(ZeroDivisionError), tracker.round(1) as r:
        r.log_metrics({"val.f1": 0.2}, step=1)
        _ = 1 / 0
    with tracker.round(2, name="retry"):
        pass
    rounds = mlflow.search_runs(search_all_experiments=True, filter_string=f"tags.mlflow.parentRunId = '{run_id}'",
                                order_by=["attributes.start_time ASC"], output_format="list")
    assert [(r.info.run_name, r.info.status) for r in rounds] == [("round-1", "FAILED"), ("retry", "FINISHED")]
    assert run_info(run_id, store)["status"] == "RUNNING"
    tracker.finish("FAILED")
    assert run_info(run_id, store)["status"] == "FAILED"
    with pytest.raises(ValueError, match="FINISHED"):
        tracker.finish("DONE")


def test_resume_reattaches_and_unknown_runs_are_config_errors(store, tmp_path):
    first = Tracker(store)
    run_id = first.start("run", {"pipeline": "mem0"})
    first.log_dict({"round": 2, "best": {"update": "U"}}, "state.json")
    first.finish("KILLED")
    again = Tracker(store)
    again.resume(run_id)
    assert json.loads(again.download("state.json", tmp_path / "dl").read_text())["best"] == {"update": "U"}
    with pytest.raises(ConfigError, match="has no artifact 'missing.json'"):
        again.download("missing.json", tmp_path / "dl")
    with again.round(3) as r:
        r.log_metrics({"val.f1": 0.7}, step=3)
    again.log_metrics({"best.f1": 0.7})
    assert again.run_id == run_id and run_info(run_id, store)["metrics"] == {"best.f1": 0.7}
    assert run_info(run_id, store)["status"] == "RUNNING"

    with pytest.raises(ConfigError) as missing:
        Tracker(store).resume("0" * 32)
    assert "0" * 32 in str(missing.value) and store in str(missing.value)
    assert "MLFLOW_TRACKING_URI" in str(missing.value)
    nowhere = f"sqlite:///{tmp_path}/nowhere.db"
    with pytest.raises(ConfigError, match="no tracking store"):
        run_info(run_id, nowhere)


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_a_run_another_process_runs_cannot_be_resumed_until_that_process_ends(store, tmp_path):
    import signal

    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom memopt.tracking import Tracker\n"
        f"t = Tracker({store!r})\nprint(t.start('run', {{}}), flush=True)\ntime.sleep(120)\n")],
        stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        run_id = holder.stdout.readline().strip()
        assert len(run_id) == 32, run_id
        with pytest.raises(ConfigError, match=f"run {run_id} of .* is being run by another memopt process"):
            Tracker(store).resume(run_id)  # two processes would log the same rounds twice
        assert run_info(run_id, store)["status"] == "RUNNING"
    finally:
        holder.send_signal(signal.SIGKILL)  # as a crash: the lock goes with the process
        holder.wait(30)
    again = Tracker(store)
    again.resume(run_id)
    again.finish("FINISHED")
    later = Tracker(store)
    later.resume(run_id)  # finish released it
    later.finish("FINISHED")
    assert not (tmp_path / "nowhere.db").exists()


def test_no_secret_reaches_params_tags_metrics_texts_or_prompts(store, tmp_path, monkeypatch):
    import mlflow

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    tracker = Tracker(store)
    run_id = tracker.start(f"run {SECRET}", {
        "lm": f"openai/gpt-4.1-mini key={SECRET}", "api_key": SECRET, "max_tokens": 512,
        "judge": {"model": "sim", "api_key": "other-value", "note": f"uses {SECRET}"}},
        tags={"note": f"started with {SECRET}", "hf_token": "tok", "OPENAI_API_KEY": SECRET})
    secret_file = tmp_path / "graphs" / "case.json"
    secret_file.parent.mkdir()
    secret_file.write_text(json.dumps({"prompt": f"Authorization: Bearer {SECRET}"}))
    (secret_file.parent / "clean.txt").write_text("nothing to hide")
    with tracker.round(1) as r:
        r.log_metrics({f"lm.{SECRET}.calls": 3, "lm.input_tokens": 100}, step=1)
        r.set_tags({"reason": f"error from {SECRET}", "client_secret": "x"})
        r.log_text(f"error: invalid key {SECRET}", "errors.txt")
        r.log_dict({"attribution": f"prompt had {SECRET}", "token": "y"}, "attributions.json")
        r.log_artifact(secret_file.parent, "graphs")
        with pytest.raises(ConfigError, match=r"rag.answer: its text holds the value of \$OPENAI_API_KEY"):
            r.register_prompts("rag", {"answer": f"Answer. Key: {SECRET}"}, commit_message="x", round_index=1)
        r.register_prompts("rag", {"answer": "Answer briefly."}, commit_message=f"fix {SECRET}", round_index=1)
    tracker.log_text(SECRET, "parent.txt")
    tracker.finish()

    client = mlflow.MlflowClient(store)
    runs = [client.get_run(run_id)] + mlflow.search_runs(
        search_all_experiments=True, filter_string=f"tags.mlflow.parentRunId = '{run_id}'", output_format="list")
    seen: list[str] = []
    for run in runs:
        seen += [run.info.run_name, *run.data.params, *run.data.params.values(), *run.data.tags,
                 *run.data.tags.values(), *run.data.metrics]
        local = Path(client.download_artifacts(run.info.run_id, "", str(tmp_path / "dl" / run.info.run_id)))
        seen += [p.read_text() for p in local.rglob("*") if p.is_file()]
    version = client.get_prompt_version("memopt.rag.answer", 1)  # the experiment's scope, "memopt"
    seen += [version.template, version.commit_message]
    everything = "\n".join(seen)
    assert SECRET not in everything and "SECRET123" not in everything
    assert "***" in everything  # values were logged masked, not skipped
    params = runs[0].data.params
    assert "api_key" not in params and "max_tokens" in params and "other-value" not in params["judge"]
    assert "hf_token" not in runs[0].data.tags and "OPENAI_API_KEY" not in runs[0].data.tags
    assert {"lm.input_tokens", "lm.___.calls"} <= set(runs[1].data.metrics)  # masked, then made a valid name
    assert "nothing to hide" in everything and "Bearer ***" in everything
    assert SECRET in secret_file.read_text()  # the local file itself is left alone


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_mlflow_is_imported_lazily_and_stays_quiet(tmp_path):
    script = (
        "import sys\n"
        "import memopt.tracking, memopt.export.formats, memopt.cli\n"
        "assert 'mlflow' not in sys.modules, 'mlflow imported at module import'\n"
        "from memopt.tracking import Tracker\n"
        f"t = Tracker('sqlite:///{tmp_path}/new.db')\n"
        "t.start('quiet', {'pipeline': 'rag'})\n"
        "with t.round(1) as r:\n"
        "    r.register_prompts('rag', {'answer': 'A.'}, commit_message='seed', round_index=1)\n"
        "    r.log_text('graph', 'graphs/case.json')\n"
        "t.finish()\n"
        "print(t.ui_hint())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    assert "mlflow server --backend-store-uri" in done.stdout and (tmp_path / "mlruns").is_dir()


def test_only_a_sqlite_store_locks_its_runs(tmp_path):
    from memopt.tracking.store import hold_run

    for uri in ("http://127.0.0.1:5000", "postgresql://u@localhost/db", "sqlite:///:memory:"):
        assert hold_run(uri, "a" * 32) is None  # a server does not say who runs a run: nothing to hold
    held = hold_run(f"sqlite:///{tmp_path}/mlflow.db", "a" * 32)
    assert (tmp_path / "mlflow.db.runs.lock").is_file()
    held.close()

