"""A team set-up handled roughly: secrets probed everywhere, PostgreSQL stopped during a round, a store that is down.

Slow tests on a real PostgreSQL (tests/postgres.py) holding the MLflow store and the Optuna storage, one
coordinator and a `memopt worker`, both given URLs whose password holds ``@``, ``:``, ``/`` and ``%40``
unescaped, and an API key in the environment:

- nothing of the password or the key shows in any output, artifact, param, tag or database row, and a
  Ctrl-C while the coordinator waits prints a resume command that reads the password from the environment;
- PostgreSQL stopped while a worker holds a trial: coordinator and worker each end with one error naming
  the store, the step and how to go on; after a restart, ``--resume`` finishes the run.

Fast: an MLflow store on a PostgreSQL port that answers nothing is given up after a bounded number of
connection attempts (MLflow's engine retries ten times, about 100 s, by default).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.optimize.test_workers import _experiment

PASSWORD = "p@ss:w/rd%40-Sekr3t"  # pasted into the URLs unescaped
API_KEY = "sk-probe-Z9Y8X7W6V5U4T3S2R1"
SIGNS = ("Sekr3t", "Z9Y8X7W6V5")  # a piece of the password and of the key: neither may show anywhere


def _with_password(url: str) -> str:
    return url.replace("postgresql://postgres@", f"postgresql://postgres:{PASSWORD}@")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MLFLOW_TRACKING_URI", "MEMOPT_STORAGE")}
    return {**env, "PYTHONWARNINGS": "ignore", "OPENAI_API_KEY": API_KEY, **extra}


def _start(args: list[str], cwd: Path, **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "memopt", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env(**env))


class _Lines:
    """A process's stderr read on a thread, so a test can wait for a line while the process runs."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: list[str] = []
        self._seen = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stderr:
            with self._seen:
                self.lines.append(line)
                self._seen.notify_all()

    def wait_for(self, text: str, timeout: float = 600) -> None:
        with self._seen:
            assert self._seen.wait_for(lambda: any(text in line for line in self.lines), timeout), self.text()

    def text(self) -> str:
        self._thread.join(timeout=60)
        return "".join(self.lines)


def _rows(url: str) -> str:
    """Every row of every table of the database at ``url``, as text."""
    import psycopg

    with psycopg.connect(url.replace(f":{PASSWORD}@", "@")) as conn:
        tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_schema = 'public'")]
        return "\n".join(f"{t}: {row}" for t in tables for row in conn.execute(f'SELECT * FROM "{t}"'))


def _files(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file())


def _trials_waiting(storage_url: str) -> bool:
    import optuna

    from memopt.optimize.storage import open_storage

    storage = open_storage(storage_url)
    for name in (n for n in optuna.get_all_study_names(storage) if ":round" in n):
        if any(t.state.name == "RUNNING" and t.user_attrs.get("memopt.worker")
               for t in optuna.load_study(study_name=name, storage=storage).get_trials(deepcopy=False)):
            return True
    return False


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    from tests.postgres import postgres_server, require_team

    require_team()
    with postgres_server(("trials", "mlflow", "trials2", "mlflow2")) as urls:
        yield {name: _with_password(url) for name, url in urls.items()}, tmp_path_factory.mktemp("team")


@pytest.mark.slow
def test_no_secret_of_a_team_run_shows_in_outputs_artifacts_params_tags_or_rows(team):
    urls, cwd = team
    exp = str(_experiment(cwd / "probe.yaml"))
    tracking = urls["mlflow"].replace("postgresql://", "postgresql+psycopg://")
    coordinator = _start(["optimize", exp, "--tracking-uri", tracking, "--storage", urls["trials"], "-o",
                          "probe.json"], cwd)
    worker = _start(["worker", exp, "--name", "w1"], cwd, MEMOPT_STORAGE=urls["trials"])  # the storage from the env
    outputs = [p.communicate(timeout=900) for p in (coordinator, worker)]
    assert coordinator.returncode == 0 and worker.returncode == 0, outputs
    summary = json.loads((cwd / "probe.json").read_text(encoding="utf-8"))
    assert summary["status"] == "FINISHED" and summary["rounds"]
    import mlflow

    from memopt.lm.redaction import quoted_uri

    client = mlflow.MlflowClient(quoted_uri(tracking))
    run = client.get_run(summary["run_id"])
    (cwd / "artifacts").mkdir()
    experiment = json.loads(Path(client.download_artifacts(run.info.run_id, "experiment.json", str(cwd / "artifacts")))
                            .read_text(encoding="utf-8"))
    assert experiment["optimizer"]["storage"].startswith("postgresql://postgres:***@127.0.0.1:")
    assert experiment["mlflow"]["tracking_uri"].startswith("postgresql+psycopg://postgres:***@127.0.0.1:")
    everything = "\n".join([*(o + e for o, e in outputs), _rows(urls["mlflow"]), _rows(urls["trials"]),
                            _files(cwd), json.dumps(run.data.params), json.dumps(run.data.tags)])
    assert "postgres:***@127.0.0.1" in everything  # the URLs are there, masked
    for sign in SIGNS:
        assert sign not in everything, everything[max(0, everything.find(sign) - 300):everything.find(sign) + 100]

    # Ctrl-C while the coordinator waits for workers: the command to resume reads the password from the environment
    waiting = _start(["optimize", exp, "--tracking-uri", tracking, "--storage", urls["trials"]], cwd)
    lines = _Lines(waiting)
    lines.wait_for("waiting for workers")
    waiting.send_signal(signal.SIGINT)
    waiting.wait(timeout=300)
    said, out = lines.text(), waiting.stdout.read()
    assert waiting.returncode == 130, said
    assert all(sign not in said + out for sign in SIGNS), said
    assert '--storage "$MEMOPT_STORAGE"' in said and '--tracking-uri "$MLFLOW_TRACKING_URI"' in said, said
    assert "MEMOPT_STORAGE=postgresql://postgres:***@127.0.0.1" in said and "environment" in said, said
    command = re.search(r"continue it with `([^`]+)`", said)[1]
    run_id = re.search(r"--resume (\w+)", command)[1]
    resumed = subprocess.Popen(command.replace("memopt ", f"{sys.executable} -m memopt ", 1) + " -o resumed.json",
                               shell=True, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=_env(MLFLOW_TRACKING_URI=tracking, MEMOPT_STORAGE=urls["trials"]))
    helper = _start(["worker", exp, "--join", run_id], cwd, MEMOPT_STORAGE=urls["trials"])
    outputs = [p.communicate(timeout=900) for p in (resumed, helper)]
    assert resumed.returncode == 0, outputs[0][1][-3000:]  # the command as printed, with the variables set, works
    assert all(sign not in o + e for o, e in outputs for sign in SIGNS)


@pytest.mark.slow
def test_postgres_stopped_during_a_round_is_one_error_in_coordinator_and_worker_and_resume_finishes(team):
    from tests.postgres import start_server, stop_server

    urls, cwd = team
    exp = str(_experiment(cwd / "outage.yaml"))
    tracking = urls["mlflow2"].replace("postgresql://", "postgresql+psycopg://")
    storage = urls["trials2"]
    coordinator = _start(["optimize", exp, "--tracking-uri", tracking, "--storage", storage], cwd)
    worker = _start(["worker", exp, "--name", "w1", "--storage", storage], cwd)
    deadline = time.monotonic() + 600
    while not _trials_waiting(storage):  # a worker holds a trial: the round is under way
        assert time.monotonic() < deadline and coordinator.poll() is None, "no trial was ever claimed"
        time.sleep(0.2)
    from memopt.optimize.storage import open_storage

    open_storage(storage).engine.dispose()  # this test's own connections go too
    stop_server(storage)
    try:
        ends = [p.communicate(timeout=600) for p in (coordinator, worker)]
    finally:
        start_server(storage)
    for name, proc, (out, err) in zip(("coordinator", "worker"), (coordinator, worker), ends, strict=True):
        errors = [line for line in err.splitlines() if "rror" in line or "xception" in line]
        assert proc.returncode == 2, (name, err[-3000:])
        assert "Traceback" not in err and len(errors) == 1 and errors[0].startswith("error: "), (name, err[-3000:])
        assert errors[0] == err.strip().splitlines()[-1], (name, err[-3000:])  # the last word, nothing after it
        assert "postgres:***@127.0.0.1" in errors[0] and all(sign not in out + err for sign in SIGNS), (name, errors)
    coordinator_error, worker_error = (err.strip().splitlines()[-1] for _, err in ends)
    assert "Optuna storage postgresql://postgres:***@" in coordinator_error, coordinator_error
    run_id = re.search(r"--resume (\w+)", coordinator_error)[1]
    assert "memopt worker" in worker_error and "--join" in worker_error, worker_error
    resumed = _start(["optimize", exp, "--resume", run_id, "--tracking-uri", tracking, "--storage", storage, "-o",
                      "outage.json"], cwd)
    helper = _start(["worker", exp, "--join", run_id, "--storage", storage], cwd)
    outputs = [p.communicate(timeout=900) for p in (resumed, helper)]
    assert resumed.returncode == 0 and helper.returncode == 0, outputs
    assert json.loads((cwd / "outage.json").read_text(encoding="utf-8"))["status"] == "FINISHED"


@pytest.mark.slow  # over 4 s on a quiet machine (CI runs it with -m slow)
def test_an_mlflow_store_on_a_postgres_that_answers_nothing_is_given_up_after_bounded_attempts(tmp_path):
    pytest.importorskip("psycopg")
    connections = []
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        server.settimeout(0.2)
        port = server.getsockname()[1]
        stop = threading.Event()

        def refuse() -> None:  # accept each connection and close it at once: a database that is not there
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except OSError:
                    continue
                connections.append(1)
                conn.close()

        thread = threading.Thread(target=refuse, daemon=True)
        thread.start()
        (tmp_path / "e.yaml").write_text("name: e\npipeline: long_context\nrounds: 1\n"
                                         "data: {source: 'synthetic:conversations=4,sessions=2'}\n")
        done = subprocess.run([sys.executable, "-m", "memopt", "optimize", "e.yaml", "--tracking-uri",
                               f"postgresql+psycopg://u:{PASSWORD}@127.0.0.1:{port}/mlflow"], capture_output=True,
                              text=True, timeout=600, cwd=tmp_path, env=_env())
        stop.set()
        thread.join()
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert f"postgresql+psycopg://u:***@127.0.0.1:{port}/mlflow: cannot open the store" in done.stderr, done.stderr
    assert all(sign not in done.stderr for sign in SIGNS)
    # psycopg tries each connection twice (with, then without SSL); MLflow's default is ten engine attempts
    from memopt.tracking.store import DB_ENGINE_ATTEMPTS

    assert 0 < len(connections) <= 2 * DB_ENGINE_ATTEMPTS < 20
