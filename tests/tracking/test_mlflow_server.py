"""`--tracking-uri http://...` against a real `mlflow server` process (127.0.0.1, SQLite backend, proxied artifacts):
rounds, the prompt registry, resume-worthy state and export all go through its REST API."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.lm.test_practice import _experiment

pytestmark = pytest.mark.slow  # the server alone takes 10 s to a minute or two to start on 2 busy cores


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def mlflow_server(tmp_path):
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", f"sqlite:///{tmp_path}/server.db",
         "--artifacts-destination", str(tmp_path / "artifacts"), "--host", "127.0.0.1", "--port", str(port),
         "--workers", "1"],
        stdout=subprocess.DEVNULL, stderr=(tmp_path / "server.log").open("w"), start_new_session=True,
        env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/health", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                pass
            assert process.poll() is None, (tmp_path / "server.log").read_text()[-3000:]
            assert time.time() < deadline, "mlflow server did not come up in 300 s"
            time.sleep(1)
        yield url
    finally:  # the server and the workers it started share its process group
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_optimize_logs_rounds_and_prompt_versions_to_an_mlflow_server(mlflow_server, tmp_path):
    import mlflow

    from memopt.optimize.loop import run_experiment
    from memopt.tracking import Tracker, run_info

    experiment = _experiment(None)
    summary = run_experiment(experiment, tracker=Tracker(mlflow_server, "memopt-remote"))
    assert summary["status"] == "FINISHED" and len(summary["rounds"]) == 1
    assert run_info(summary["run_id"], mlflow_server)["status"] == "FINISHED"
    client = mlflow.MlflowClient(mlflow_server)
    rounds = client.search_runs([client.get_experiment_by_name("memopt-remote").experiment_id],
                                filter_string=f"tags.mlflow.parentRunId = '{summary['run_id']}'")
    assert sorted(r.data.tags["memopt.round"] for r in rounds) == ["0", "1"]
    assert all(r.info.status == "FINISHED" and "val.f1" in r.data.metrics for r in rounds)
    versions = list(client.search_prompt_versions("memopt-remote.mem0.extract"))  # scoped by the experiment
    assert versions and summary["rounds"][0]["prompt_versions"]["memopt-remote.mem0.extract"] == \
        max(v.version for v in versions)
    assert {a.path for a in client.list_artifacts(summary["run_id"])} >= {"summary.json", "state", "best_prompts"}
    done = subprocess.run([sys.executable, "-m", "memopt", "export", summary["run_id"], "--format", "text", "--out",
                           str(tmp_path / "tuned"), "--tracking-uri", mlflow_server], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    best = summary["final"]["round"]
    version = summary["rounds"][best - 1]["prompt_versions"]["memopt-remote.mem0.extract"] if best else 1
    registered = client.load_prompt(f"prompts:/memopt-remote.mem0.extract/{version}")
    assert (tmp_path / "tuned" / "mem0" / "extract.md").read_text().strip() == registered.template.strip()
