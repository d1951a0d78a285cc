"""SIGINT and SIGTERM during each phase of `memopt optimize`, and two optimize runs started together.

Each interrupted run is a real `memopt optimize` process that sends itself the signal when it
reaches the phase (round 0, attribution, selection inside Optuna, logging to MLflow); the test then
checks the exit (one "interrupted" line, 130 / 143, no traceback), that no MLflow run is left
RUNNING, and that `--resume` finishes the experiment. Slow: about 16 tiny optimize processes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXPERIMENT = """\
name: interrupts
pipeline: long_context
data: {source: "synthetic:conversations=4,sessions=2,seed=2,questions_per_conversation=6"}
optimizer: {name: memtrace, candidates: 2, ops_per_round: 1, trials: 3}
rounds: 1
mlflow: {experiment: interrupts}
"""

# Runs `memopt` with one phase patched to send the signal to its own process when it is reached.
DRIVER = """\
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if pytest runs in the background
phase, signum = sys.argv[1], int(sys.argv[2])
import memopt.optimize.reflective as reflective, memopt.optimize.loop as run, memopt.optimize.scoring as scoring
import memopt.tracking as tracking

def wrap(owner, name, when):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if when(*args, **kwargs):
            os.kill(os.getpid(), signum)
        return original(*args, **kwargs)
    setattr(owner, name, wrapper)

if phase == "round0":
    wrap(run, "_record", lambda index, *a, **k: index == 0)
elif phase == "attribution":
    wrap(reflective.ReflectiveOptimizer, "_attribute", lambda *a, **k: True)
elif phase == "selection":
    wrap(scoring.Scorer, "score", lambda self, system, conversations, *, judged, **k: not judged)
elif phase == "logging":
    wrap(tracking.RoundLog, "log_metrics", lambda self, metrics, step=None: step == 1)
elif phase == "opening":  # the nested run of round 1 is in the store, its opening not yet returned
    open_round = tracking.Tracker.open_round
    def opened(self, index, name=None):
        log = open_round(self, index, name)
        if index == 1:
            os.kill(os.getpid(), signum)
        return log
    tracking.Tracker.open_round = opened
sys.argv = ["memopt", *sys.argv[3:]]
from memopt.cli import main
main()
"""


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory) -> Path:
    """An initialised, empty MLflow sqlite store, created once and copied by each test."""
    import mlflow

    path = tmp_path_factory.mktemp("template") / "mlflow.db"
    mlflow.MlflowClient(f"sqlite:///{path}").search_experiments()
    return path


def _memopt(args: list[str], cwd: Path, *, phase: str | None = None, signum: int = 0,
            timeout: float = 300) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", DRIVER, phase, str(signum), *args] if phase else \
        [sys.executable, "-m", "memopt", *args]
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


def _runs(uri: str) -> list:
    import mlflow

    client = mlflow.MlflowClient(uri)
    experiment = client.get_experiment_by_name("interrupts")
    return client.search_runs([experiment.experiment_id]) if experiment else []


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("phase", ["round0", "attribution", "selection", "logging", "opening"])
def test_a_signal_in_any_phase_leaves_no_running_run_and_resume_finishes(phase, signum, tmp_path, empty_db):
    shutil.copy(empty_db, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    (tmp_path / "exp.yaml").write_text(EXPERIMENT)
    args = ["optimize", "exp.yaml", "--tracking-uri", uri]
    killed = _memopt(args, tmp_path, phase=phase, signum=signum)
    name = signal.Signals(signum).name
    assert killed.returncode == 128 + signum, killed.stderr[-3000:]
    assert f"interrupted ({name})" in killed.stderr and "Traceback" not in killed.stderr, killed.stderr[-3000:]
    assert "Trial" not in killed.stderr  # no Optuna "Trial ... failed" report
    runs = _runs(uri)
    [parent] = [r for r in runs if r.data.tags.get("memopt.kind") == "optimize"]
    assert parent.info.status == "KILLED" and all(r.info.status != "RUNNING" for r in runs)
    assert f"--resume {parent.info.run_id}" in killed.stderr
    if phase == "round0":  # data identity: resuming on other data is refused before any work, naming both
        other = _memopt([*args, "--resume", parent.info.run_id, "--data", "synthetic:conversations=4,seed=9"],
                        tmp_path)
        assert other.returncode == 2 and "Traceback" not in other.stderr, other.stderr[-3000:]
        assert "synthetic:conversations=4,sessions=8,seed=9" in other.stderr and "sessions=2,seed=2" in other.stderr
        assert all(r.info.status != "RUNNING" for r in _runs(uri))
    resumed = _memopt([*args, "--resume", parent.info.run_id, "--out", "summary.json"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["run_id"] == parent.info.run_id and [r["round"] for r in summary["rounds"]] == [1]
    runs = _runs(uri)
    rounds = [r for r in runs if r.data.tags.get("mlflow.parentRunId") == parent.info.run_id]
    finished = sorted(int(r.data.tags["memopt.round"]) for r in rounds if r.info.status == "FINISHED")
    assert finished == [0, 1] and all(r.info.status in ("FINISHED", "KILLED") for r in rounds)
    assert next(r for r in runs if r.info.run_id == parent.info.run_id).info.status == "FINISHED"


def test_two_runs_started_together_on_a_fresh_store_both_succeed(tmp_path):
    """MLflow creates a new sqlite store with a schema migration: parallel first runs must not race it."""
    import mlflow

    (tmp_path / "exp.yaml").write_text(EXPERIMENT)
    uri = f"sqlite:///{tmp_path}/fresh.db"
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    processes = [subprocess.Popen([sys.executable, "-m", "memopt", "optimize", "exp.yaml", "--tracking-uri", uri,
                                   "--out", f"summary{i}.json"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for i in range(2)]
    outputs = [p.communicate(timeout=600) for p in processes]
    for process, (_, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, err[-3000:]
    ids = {json.loads((tmp_path / f"summary{i}.json").read_text())["run_id"] for i in range(2)}
    assert len(ids) == 2
    client = mlflow.MlflowClient(uri)
    assert all(client.get_run(i).info.status == "FINISHED" for i in ids)
    seed = [v for v in client.search_prompt_versions("interrupts.long_context.answer") if v.tags.get("round") == "0"]
    assert len(seed) == 1  # the identical starting prompt is registered once and shared


# A checkpoint step slower than the grace a held signal gives it (a loaded machine): the signal arrives while
# round 0's run is being ended, and the step outlasts `GRACE_SECONDS` (made short here), so it is cut.
SLOW_STEP = """\
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
signum = int(sys.argv[1])
import mlflow
from memopt.core import interrupts
interrupts.GRACE_SECONDS = 0.5
set_terminated, calls = mlflow.MlflowClient.set_terminated, []
def slow(self, run_id, status=None, end_time=None):
    calls.append(run_id)
    if len(calls) == 1:  # round 0's run, ended inside its checkpoint step
        os.kill(os.getpid(), signum)
        while True:  # until the held signal's grace is over and the step is cut
            time.sleep(0.01)
    return set_terminated(self, run_id, status, end_time)
mlflow.MlflowClient.set_terminated = slow
sys.argv = ["memopt", *sys.argv[2:]]
from memopt.cli import main
main()
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_checkpoint_step_cut_short_still_ends_the_parent_run_killed(signum, tmp_path, empty_db):
    shutil.copy(empty_db, tmp_path / "mlflow.db")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    (tmp_path / "exp.yaml").write_text(EXPERIMENT)
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    killed = subprocess.run([sys.executable, "-c", SLOW_STEP, str(signum), "optimize", "exp.yaml", "--tracking-uri",
                             uri], capture_output=True, text=True, cwd=tmp_path, timeout=300, env=env)
    assert killed.returncode == 128 + signum, killed.stderr[-3000:]
    assert "Traceback" not in killed.stderr, killed.stderr[-3000:]
    runs = _runs(uri)
    [parent] = [r for r in runs if r.data.tags.get("memopt.kind") == "optimize"]
    assert "ended KILLED" in killed.stderr
    assert parent.info.status == "KILLED" and all(r.info.status != "RUNNING" for r in runs), \
        [(r.info.run_name, r.info.status) for r in runs]
