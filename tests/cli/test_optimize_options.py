"""`memopt optimize`'s options that say what they are: --concurrency (LM calls in flight; --workers, its old name,
warns), --seed; the printed export command works as printed; the worker hint names the experiment file."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys

import pytest

from memopt.core.errors import ConfigError
from tests.conftest import ROOT, run_main


def test_workers_is_the_deprecated_name_of_concurrency(tmp_path, monkeypatch, capsys):
    code, _, err = run_main(["optimize", "missing.yaml", "--workers", "3"], tmp_path, monkeypatch, capsys)
    assert code != 0 and "missing.yaml" in err  # the run went on to the experiment, with a warning first
    assert "--workers is deprecated: it sets LM concurrency (calls in flight), not worker processes; use " \
           "--concurrency 3" in " ".join(err.split())
    with pytest.raises(ConfigError, match="--workers is the old name of --concurrency"):
        from memopt.cli.options import concurrency_of

        concurrency_of(4, 3)
    code, out, _ = run_main(["optimize", "--help"], tmp_path, monkeypatch, capsys)
    assert "--concurrency" in out and "Not worker processes" in " ".join(out.split()) and "--workers" not in out


def test_worker_hint_names_the_experiment_file_and_the_run(tmp_path):
    from memopt.optimize.workers import TrialPool

    pool = TrialPool(f"sqlite:///{tmp_path}/trials.db", {}, "team", experiment_file="experiments/team.yaml")
    pool.run_id = "r" * 32
    assert pool.worker_command() == (f"memopt worker experiments/team.yaml --storage sqlite:///{tmp_path}/trials.db "
                                     f"--join {'r' * 32}")
    secret = TrialPool(f"sqlite:///{tmp_path}/trials.db", {}, "team")
    secret.url, secret.run_id = "postgresql://memopt:hunter2@db:5432/trials", "r" * 32
    command = secret.worker_command()
    assert "hunter2" not in command and "<the experiment file of this run>" in command and "MEMOPT_STORAGE" in command


@pytest.mark.slow  # a one-round optimize (CI runs it with -m slow)
def test_seed_and_concurrency_reach_the_run_and_the_printed_export_command_works_as_printed(tmp_path):
    store = tmp_path / "elsewhere" / "mlflow.db"
    store.parent.mkdir()
    uri = f"sqlite:///{store}"
    done = subprocess.run([sys.executable, "-m", "memopt", "optimize", str(ROOT / "experiments" / "quickstart.yaml"),
                           "--rounds", "1", "--data", "synthetic:conversations=4,sessions=3,seed=1", "--seed", "5",
                           "--workers", "2", "--tracking-uri", uri, "--out", "summary.json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "--workers is deprecated" in done.stderr
    run_id = json.loads((tmp_path / "summary.json").read_text())["run_id"]
    import mlflow

    params = mlflow.MlflowClient(uri).get_run(run_id).data.params
    assert params["seed"] == "5" and params["lm.concurrency"] == "2"
    [line] = [x for x in done.stdout.splitlines() if x.startswith("Export: ")]
    command = shlex.split(line.removeprefix("Export: "))
    assert command[:3] == ["memopt", "export", run_id] and ["--tracking-uri", uri] == command[-2:]
    (tmp_path / "other").mkdir()  # where the store is not the default: the command names it
    exported = subprocess.run([sys.executable, "-m", "memopt", *command[1:]], cwd=tmp_path / "other",
                              capture_output=True, text=True, timeout=300)
    assert exported.returncode == 0, exported.stderr[-2000:]
    assert (tmp_path / "other" / "tuned-prompts" / "mem0" / "extract.md").is_file()


@pytest.mark.slow  # a coordinator up to its first batch of trials (CI runs it with -m slow)
def test_a_coordinator_without_workers_prints_the_command_that_starts_one(tmp_path):
    import os
    import signal

    shutil.copy(ROOT / "experiments" / "team.yaml", tmp_path / "my team.yaml")
    proc = subprocess.Popen([sys.executable, "-m", "memopt", "optimize", "my team.yaml", "--storage",
                             f"sqlite:///{tmp_path}/trials.db", "--tracking-uri", f"sqlite:///{tmp_path}/mlflow.db"],
                            cwd=tmp_path, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                            start_new_session=True)
    try:
        hint = next((line for line in proc.stderr if line.startswith("waiting for workers: ")), "")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(60)
    command = shlex.split(hint.removeprefix("waiting for workers: "))
    assert command[:3] == ["memopt", "worker", "my team.yaml"], hint
    assert command[3:5] == ["--storage", f"sqlite:///{tmp_path}/trials.db"] and command[5] == "--join", hint
    assert len(command[6]) == 32, hint
