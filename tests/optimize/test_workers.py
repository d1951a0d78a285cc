"""`memopt worker`: a round's trials scored by other processes through a shared Optuna storage.

Fast tests: the errors (unreachable storage, a URL that is no storage, an unknown run id, a worker whose
experiment differs from the coordinator's). Slow tests: a real PostgreSQL (tests/postgres.py) holding both
the MLflow store and the Optuna storage, `memopt serve --delay 0.2` as the LM, one coordinator and two
worker processes: the same result as one process with the same seed, every LM call the server answered
counted once; and a worker killed with SIGKILL mid-trial.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memopt.core.errors import ConfigError

EXPERIMENT = """\
name: team
pipeline: mem0
data:
  source: "synthetic:conversations=4,sessions=3,seed=1"
  split: [0.5, 0.25, 0.25]
lm: {{task: "{lm}", judge: "{lm}", reflection: "{lm}", concurrency: 8, cache: false}}
optimizer: {{name: memtrace, candidates: 3, ops_per_round: 1, trials: 8, trial_batch: 4,
             search: {{top_k: [5, 10, 20]}}}}
rounds: {rounds}
seed: {seed}
mlflow: {{experiment: team, traces: none, prompt_prefix: {prefix}}}
"""


def _experiment(path: Path, *, lm: str = "sim", rounds: int = 1, seed: int = 3) -> Path:
    """An experiment whose prompts register under a prefix of its own (``path``'s stem): runs on one store apart."""
    path.write_text(EXPERIMENT.format(lm=lm, rounds=rounds, seed=seed, prefix=path.stem), encoding="utf-8")
    return path


# --- errors ---------------------------------------------------------------------------------------------------
def test_unreachable_storage_is_one_error_naming_the_key():
    from memopt.optimize.storage import open_storage

    # Without the team extra, the error says to install it; with it, that the server cannot be reached.
    with pytest.raises(ConfigError, match=r"optimizer.storage: (cannot use the storage postgresql://memopt:\*\*\*@"
                                          r"127.0.0.1:1/memopt: .*refused|PostgreSQL needs the psycopg driver)") as e:
        open_storage("postgresql://memopt:secret@127.0.0.1:1/memopt")
    assert "secret" not in str(e.value)  # the password is never printed
    with pytest.raises(ConfigError, match=r"cannot use the storage sqlite:////nonexistent/dir/trials.db: unable"):
        open_storage("sqlite:////nonexistent/dir/trials.db")
    with pytest.raises(ConfigError, match=r"cannot open the journal file /nonexistent/dir/t.log"):
        open_storage("journal:/nonexistent/dir/t.log")


def test_not_a_storage_url():
    from memopt.optimize.storage import open_storage

    with pytest.raises(ConfigError, match=r"--storage: 'redis://x' is not a storage URL"):
        open_storage("redis://x", key="--storage")


def test_unknown_run_id(tmp_path):
    from memopt.optimize.storage import open_storage
    from memopt.optimize.worker import find_run

    storage = open_storage(f"sqlite:///{tmp_path / 'trials.db'}")
    with pytest.raises(ConfigError, match=r"--join nosuchrun: no run nosuchrun in this storage"):
        find_run(storage, "team", "nosuchrun", wait=0)
    with pytest.raises(ConfigError, match=r"no open run of experiment 'team'"):
        find_run(storage, "team", None, wait=0)


def test_a_worker_without_join_takes_the_newest_open_run_of_its_experiment(tmp_path):
    from memopt.optimize.worker import find_run
    from memopt.optimize.workers import TrialPool

    url = f"sqlite:///{tmp_path / 'trials.db'}"
    pools = {run: TrialPool(url, {}, name) for run, name in (("r1", "team"), ("r2", "team"), ("r3", "other"))}
    for run, pool in pools.items():
        pool.open(run)
    assert find_run(pools["r1"].storage, "team", None, wait=0).study_name == "memopt:r2"
    pools["r2"].close()  # a finished run takes no more workers
    assert find_run(pools["r1"].storage, "team", None, wait=0).study_name == "memopt:r1"
    with pytest.raises(ConfigError, match=r"--join r2: run r2 has ended .*--resume r2`, then start the workers"):
        find_run(pools["r1"].storage, "team", "r2", wait=0)  # a worker does not join a run that ended
    pools["r2"].open("r2")  # ... until its coordinator resumes it
    assert find_run(pools["r1"].storage, "team", "r2", wait=0).study_name == "memopt:r2"  # --join names any run


def test_worker_refuses_an_experiment_that_differs(tmp_path):
    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import data_fingerprint, splits_of
    from memopt.optimize.storage import identity_of
    from memopt.optimize.worker import run_worker
    from memopt.optimize.workers import TrialPool

    url = f"sqlite:///{tmp_path / 'trials.db'}"
    coordinator = load_experiment(_experiment(tmp_path / "a.yaml", seed=3))
    pool = TrialPool(url, identity_of(coordinator, data_fingerprint(*splits_of(coordinator)[1:])), "team")
    pool.open("run1")
    other = load_experiment(_experiment(tmp_path / "b.yaml", seed=4))
    with pytest.raises(ConfigError, match=r"does not match run run1's.*seed: worker 4, coordinator 3"):
        run_worker(other, url, join="run1", wait=0)


NOT_JOURNALS = {"notes.txt": b"my notes\n", "no-newline.txt": b"my notes", "data.jsonl": b'{"id": 1}\n',
                "list.json": b"[1, 2]\n", "binary.log": b"\xff\xfe\x00\x81\n",
                "second-line.log": b'{"op_code": 0, "worker_id": "w"}\nmy notes\n'}


def test_a_journal_path_holding_another_file_is_refused_and_left_unchanged(tmp_path):
    from memopt.optimize.storage import open_storage
    from memopt.optimize.worker import find_run
    from memopt.optimize.workers import TrialPool

    for name, content in NOT_JOURNALS.items():
        (tmp_path / name).write_bytes(content)
        for create in (True, False):
            with pytest.raises(ConfigError, match=rf"--storage: .*{re.escape(name)} is not an Optuna journal \(line "
                                                  r"\d is not a journal entry.*left unchanged\. Choose a new file"):
                open_storage(f"journal:{tmp_path / name}", key="--storage", create=create)
        assert (tmp_path / name).read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(NOT_JOURNALS)  # not even a lock file
    (tmp_path / "empty.log").write_bytes(b"")
    TrialPool(f"journal:{tmp_path / 'empty.log'}", {}, "team").open("r1")  # an empty file becomes a journal
    storage = open_storage(f"journal:{tmp_path / 'empty.log'}", create=False)  # and a journal opens again
    assert find_run(storage, "team", None, wait=0).study_name == "memopt:r1"


@pytest.mark.slow  # over 2 s on a quiet machine (CI runs it with -m slow)
def test_optimize_and_worker_refuse_a_journal_path_holding_another_file(tmp_path):
    (tmp_path / "notes.txt").write_text("my notes\n", encoding="utf-8")
    experiment = str(_experiment(tmp_path / "e.yaml"))
    for args in (("optimize", experiment, "--budget", "300", "--rounds", "1"), ("worker", experiment)):
        done = subprocess.run([sys.executable, "-m", "memopt", *args, "--storage", "journal:notes.txt"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "notes.txt is not an Optuna journal" in done.stderr and "Traceback" not in done.stderr, done.stderr
        assert (tmp_path / "notes.txt").read_bytes() == b"my notes\n"


def test_worker_command_without_storage(tmp_path):
    done = subprocess.run([sys.executable, "-m", "memopt", "worker", str(_experiment(tmp_path / "e.yaml"))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "give --storage URL" in done.stderr and "Traceback" not in done.stderr


def test_prompt_prefix_keeps_two_streams_of_one_pipeline_apart(tmp_path):
    """Two people optimizing mem0 on one store: each stream's versions are its own (mlflow.prompt_prefix)."""
    import mlflow

    from memopt.tracking import Tracker

    store = f"sqlite:///{tmp_path / 'mlflow.db'}"
    alice, bob = Tracker(store, "team", prompt_prefix="alice"), Tracker(store, "team", prompt_prefix="bob")
    alice_run = alice.start("alice-run", {})
    bob.start("bob-run", {})
    seen = []
    for index, (tracker, text) in enumerate([(alice, "Extract facts."), (bob, "Extract every fact."),
                                             (alice, "Extract dated facts."), (bob, "Extract every fact.")], 1):
        with tracker.round(index) as log:
            seen.append(log.register_prompts("mem0", {"extract": text}, commit_message="x", round_index=index))
    alice.finish()
    bob.finish()
    assert seen == [{"alice.mem0.extract": 1}, {"bob.mem0.extract": 1}, {"alice.mem0.extract": 2},
                    {"bob.mem0.extract": 1}]
    client = mlflow.MlflowClient(store)
    assert client.get_prompt_version("alice.mem0.extract", 2).tags["parent_version"] == "1"
    assert client.get_prompt_version("alice.mem0.extract", 2).template == "Extract dated facts."
    assert client.get_prompt_version("alice.mem0.extract", 2).tags[f"memopt.rounds.{alice_run}"] == "3"


# --- end to end on PostgreSQL ---------------------------------------------------------------------------------
def _serve(delay: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "memopt", "serve", "--port", "0", "--delay", str(delay)],
                            stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    url = re.search(r"(http://127\.0\.0\.1:\d+/v1)", line).group(1)
    return proc, url


def _stop_serve(proc: subprocess.Popen) -> int:
    """Stop `memopt serve`; the number of chat requests it answered."""
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=60)[0]
    return int(re.search(r"stopped: (\d+) requests", out).group(1))  # chat requests (embeddings counted apart)


def _memopt(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "memopt", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _finish(proc: subprocess.Popen, timeout: float = 900) -> str:
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    return out + err


def _choices(summary: dict) -> list:
    keep = ("round", "val_f1", "test_f1", "val_judge", "test_judge", "accepted", "prompt_versions", "blamed_ops",
            "trials", "trials_errored", "knobs")
    rounds = [{k: r.get(k) for k in keep} for r in summary["rounds"]]
    for r in rounds:  # <prefix>.mem0.extract -> mem0.extract: each run registers under its own prefix
        r["prompt_versions"] = {name.split(".", 1)[1]: v for name, v in (r["prompt_versions"] or {}).items()}
    return rounds


_STORAGES: dict[str, object] = {}


def _storage(url: str) -> object:
    """One Optuna storage (one connection pool) per URL for the test's own looks at the trials."""
    from memopt.optimize.storage import open_storage

    if url not in _STORAGES:
        _STORAGES[url] = open_storage(url)
    return _STORAGES[url]


def _trials(storage_url: str, run_id: str) -> list:
    import optuna

    storage = _storage(storage_url)
    names = [n for n in optuna.get_all_study_names(storage) if n.startswith(f"memopt:{run_id}:round")]
    return [t for n in names for t in optuna.load_study(study_name=n, storage=storage).get_trials(deepcopy=False)]


def _trial_calls(trials: list) -> int:
    return sum(u["calls"] for t in trials for u in t.user_attrs.get("memopt.usage", {}).values())


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    from tests.postgres import postgres_server, require_team

    require_team()
    with postgres_server(("trials", "mlflow")) as urls:
        yield urls, tmp_path_factory.mktemp("team")


def _distributed(urls: dict, cwd: Path, lm: str, *, kill_one: bool) -> tuple[dict, int, list]:
    """One coordinator and two workers; with ``kill_one``, the first worker is killed once it holds a trial."""
    exp = _experiment(cwd / f"exp-{kill_one}.yaml", lm=lm)
    mlflow = urls["mlflow"].replace("postgresql://", "postgresql+psycopg://")
    storage = urls["trials"]
    out = cwd / f"multi-{kill_one}.json"
    coordinator = _memopt("optimize", str(exp), "--tracking-uri", mlflow, "--storage", storage, "-o", str(out),
                          cwd=cwd)
    workers = [_memopt("worker", str(exp), "--storage", storage, "--name", f"w{i}", cwd=cwd) for i in (1, 2)]
    if kill_one:  # once w1 holds a trial and has reported some of its calls (at a beat), before it completes it
        deadline = time.monotonic() + 600
        victim = None
        while victim is None and time.monotonic() < deadline:
            time.sleep(0.2)
            for name in [n for n in _study_names(storage) if ":round" in n]:
                if any(t.state.name == "RUNNING" and t.user_attrs.get("memopt.worker") == "w1"
                       and _trial_calls([t]) > 0 for t in _trials(storage, name.split(":")[1])):
                    victim = workers[0]
        assert victim is not None, "worker w1 never reported calls of a trial it held"
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
        logs = [_finish(coordinator), _finish(workers[1])]
    else:
        logs = [_finish(coordinator), *(_finish(w) for w in workers)]
    summary = json.loads(out.read_text(encoding="utf-8"))
    return summary, len(logs), _trials(storage, summary["run_id"])


def _study_names(storage_url: str) -> list[str]:
    import optuna

    return optuna.get_all_study_names(_storage(storage_url))


@pytest.mark.slow
def test_two_workers_on_postgres_give_the_single_process_result_and_count_every_call(team):
    urls, cwd = team
    serve, lm_url = _serve(0.2)
    try:
        lm = f"openai/sim@{lm_url}"
        mlflow = urls["mlflow"].replace("postgresql://", "postgresql+psycopg://")
        single = _experiment(cwd / "single.yaml", lm=lm)
        _finish(_memopt("optimize", str(single), "--tracking-uri", mlflow, "-o", str(cwd / "single.json"), cwd=cwd))
        before = _stop_serve(serve)
        serve, lm_url = _serve(0.2)
        summary, _, trials = _distributed(urls, cwd, f"openai/sim@{lm_url}", kill_one=False)
    finally:
        requests = _stop_serve(serve)
    reference = json.loads((cwd / "single.json").read_text(encoding="utf-8"))
    assert before == reference["lm_calls"]  # the single process counts what the server answered
    assert _choices(summary) == _choices(reference)
    assert (summary["final"], summary["best_knobs"], summary["gain"]) == (reference["final"], reference["best_knobs"],
                                                                   reference["gain"])
    workers = {t.user_attrs["memopt.worker"] for t in trials if t.state.name == "COMPLETE"}
    assert workers == {"w1", "w2"}  # the trials were split across both workers
    assert all(t.state.name == "COMPLETE" for t in trials)
    assert summary["lm_calls"] == requests  # every call the server answered counted, none twice
    team[1].joinpath("own-calls").write_text(str(summary["lm_calls"] - _trial_calls(trials)), encoding="utf-8")


@pytest.mark.slow
def test_a_worker_killed_mid_trial_is_retried_and_the_numbers_add_up(team):
    urls, cwd = team
    serve, lm_url = _serve(0.2)
    try:
        summary, _, trials = _distributed(urls, cwd, f"openai/sim@{lm_url}", kill_one=True)
    finally:
        requests = _stop_serve(serve)
    reference = json.loads((cwd / "single.json").read_text(encoding="utf-8"))
    assert _choices(summary) == _choices(reference)  # the round completed with the same choice
    failed = [t for t in trials if t.state.name == "FAIL"]
    assert failed and all(t.user_attrs["memopt.worker"] == "w1" for t in failed)
    keys = {t.user_attrs["memopt.key"] for t in failed}
    retried = [t for t in trials if t.user_attrs["memopt.key"] in keys and t.state.name == "COMPLETE"]
    assert {t.user_attrs["memopt.worker"] for t in retried} == {"w2"}
    # Counted = the coordinator's own calls (as in the run without a kill) + every trial attempt's reported usage,
    # the killed one's up to its last beat; never more than the server answered.
    own = int(cwd.joinpath("own-calls").read_text(encoding="utf-8"))
    assert summary["lm_calls"] == own + _trial_calls(trials)
    assert _trial_calls(failed) > 0
    assert summary["lm_calls"] <= requests
