"""Tracking-store faults never lose a run silently: a store under a regular file, an unreachable server (with a
password in its URI), the store moved away, its artifact folder made read-only, or its disk filled in the middle
of `memopt optimize`, and SIGTERM while MLflow waits on a server that never answers.

Each asserts the exit code, one ``error:`` line and no traceback on stderr, no password printed, nothing
changed outside the run's own folder, and, where the store can still be written, no run left RUNNING.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memopt.cli import main
from tests.conftest import snapshot
from tests.lm.test_hostile_cache import read_only

EXPERIMENT = ("pipeline: rag\n"
              "data: {source: 'synthetic:conversations=3,sessions=2,seed=1,questions_per_conversation=3'}\n")
# half a second later, another process sends this one SIGTERM (a signal from a thread of this process could land on
# that thread and never wake the main one)
SIGTERM_ME = [sys.executable, "-c", f"import os, time; time.sleep(0.5); os.kill({os.getpid()}, {int(signal.SIGTERM)})"]


def _optimize(tmp_path: Path, uri: str, monkeypatch, capsys, *extra: str) -> tuple[int, list[str]]:
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(sys, "argv", ["memopt", "optimize", str(tmp_path / "exp.yaml"), "--tracking-uri", uri,
                                      *extra])
    with pytest.raises(SystemExit) as exit_:
        main()
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return exit_.value.code, [line for line in err.splitlines() if line.strip()]


def _one_error(lines: list[str]) -> str:
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and lines[-1] == errors[0], lines
    return errors[0]


def _statuses(db: Path) -> dict[str, str]:
    import mlflow

    client = mlflow.MlflowClient(f"sqlite:///{db}")
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    return {r.info.run_name.split(" ")[0]: r.info.status for r in runs}


def _when_checkpointed(root: Path, fault: Callable[[], None]) -> threading.Thread:
    """Apply ``fault`` as soon as round 0's checkpoint is in the artifact store (polls the folder)."""
    def watch() -> None:
        deadline = time.monotonic() + 600
        while not any(root.rglob("state/state.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        fault()

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def work(tmp_path) -> Path:
    (tmp_path / "cwd").mkdir()
    (tmp_path / "a_file").write_text("not a folder")
    (tmp_path / "exp.yaml").write_text(EXPERIMENT + "rounds: 2\n")
    return tmp_path


def test_a_store_under_a_regular_file_is_one_error(work, monkeypatch, capsys):
    before = snapshot(work)
    code, lines = _optimize(work, f"sqlite:///{work}/a_file/mlflow.db", monkeypatch, capsys)
    assert code == 2 and len(lines) == 1
    assert _one_error(lines).startswith(f"error: MLflow tracking URI sqlite:///{work}/a_file/mlflow.db: cannot "
                                        "open the store (FileExistsError")
    assert snapshot(work) == before


@pytest.mark.slow  # ≈ 5 s: MLflow's (bounded) retries
def test_an_unreachable_server_is_one_error_without_its_password(work, monkeypatch, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    before = snapshot(work)
    code, lines = _optimize(work, f"http://memopt:hunter2-secret@127.0.0.1:{port}/", monkeypatch, capsys)
    assert code == 2 and len(lines) == 1
    line = _one_error(lines)
    assert f"http://memopt:***@127.0.0.1:{port}/: cannot open the store" in line
    assert "connection refused" in line and "hunter2" not in line
    assert snapshot(work) == before


@pytest.mark.slow  # ≈ 15-40 s: round 0 of a small experiment
def test_the_store_moved_away_mid_run_is_one_error(work, monkeypatch, capsys):
    store = work / "cwd" / "store"
    moved = work / "cwd" / "moved"
    watcher = _when_checkpointed(work / "cwd", lambda: store.rename(moved))
    code, lines = _optimize(work, f"sqlite:///{store}/mlflow.db", monkeypatch, capsys)
    watcher.join()
    assert code == 2
    line = _one_error(lines)
    # noticed before the next call, or, when the move cut a write in half, by SQLite itself
    assert line.startswith((f"error: MLflow tracking store {store}/mlflow.db: the database is gone",
                            f"error: MLflow tracking store sqlite:///{store}/mlflow.db: ")), line
    assert "gone" in line or "disk I/O error" in line, line
    assert not store.exists()  # never silently recreated empty
    assert "round-0" in _statuses(moved / "mlflow.db")  # what was logged is in the moved store
    assert sorted(p.name for p in work.iterdir()) == ["a_file", "cwd", "exp.yaml"]


@pytest.mark.slow  # ≈ 15-40 s: round 0 and round 1 of a small experiment
def test_read_only_artifacts_mid_run_fail_the_run_and_leave_nothing_running(work, monkeypatch, capsys):
    store = work / "cwd" / "store"
    locked = threading.Event()
    artifacts = work / "cwd" / "mlruns"
    release: list[Callable[[], None]] = []

    def lock() -> None:
        context = read_only(artifacts)
        context.__enter__()
        release.append(lambda: context.__exit__(None, None, None))
        locked.set()

    watcher = _when_checkpointed(work / "cwd", lock)
    try:
        code, lines = _optimize(work, f"sqlite:///{store}/mlflow.db", monkeypatch, capsys)
    finally:
        watcher.join()
        for undo in release:
            undo()
    assert locked.is_set() and code == 2
    line = _one_error(lines)
    assert line.startswith(f"error: MLflow tracking store sqlite:///{store}/mlflow.db: log"), line
    assert "failed (" in line and str(artifacts) in line
    statuses = _statuses(store / "mlflow.db")
    assert statuses.pop("round-0") == "FINISHED" and set(statuses.values()) == {"FAILED"}, statuses


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.mark.slow  # ≈ 15-40 s: round 0 of a small experiment
def test_a_full_disk_mid_run_is_one_error(work, monkeypatch, capsys):
    disk = work / "disk"
    if not _mount_tmpfs(disk, "8m"):
        pytest.skip("filling a disk for real needs a tmpfs, which only root can mount")
    try:
        (disk / "cwd").mkdir()
        shutil.copy(work / "exp.yaml", disk / "exp.yaml")

        def fill() -> None:
            with (disk / "filler").open("wb") as f, contextlib.suppress(OSError):
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()

        watcher = _when_checkpointed(disk / "cwd", fill)
        code, lines = _optimize(disk, f"sqlite:///{disk}/cwd/store/mlflow.db", monkeypatch, capsys)
        watcher.join()
        assert code == 2
        line = _one_error(lines)
        assert line.startswith(f"error: MLflow tracking store sqlite:///{disk}/cwd/store/mlflow.db: "), line
        assert "No space left on device" in line or "disk is full" in line, line
    finally:
        os.chdir(work)
        subprocess.run(["umount", "--lazy", str(disk)], check=True)  # MLflow keeps its database open


@pytest.mark.slow  # ≈ 5-15 s: memopt's start-up in a subprocess
def test_sigterm_is_honoured_while_mlflow_waits_on_a_silent_server(work):
    """A server that accepts the connection and never answers: MLflow would wait 20 s per try, 3 tries; SIGTERM
    ends memopt at once (130 + ...: 143) with the one "interrupted" line, and no run left behind."""
    (work / "exp.yaml").write_text(EXPERIMENT + "rounds: 1\n")
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(4)
        process = subprocess.Popen([sys.executable, "-m", "memopt", "optimize", str(work / "exp.yaml"),
                                    "--tracking-uri", f"http://127.0.0.1:{silent.getsockname()[1]}/"],
                                   cwd=work / "cwd", stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        silent.settimeout(300)
        connection, _ = silent.accept()  # memopt is now inside MLflow's request
        with connection:
            process.send_signal(signal.SIGTERM)
            try:
                out, err = process.communicate(timeout=15)  # far below MLflow's 60 s of timeouts
            except subprocess.TimeoutExpired:
                process.kill()
                out, err = process.communicate()
                pytest.fail(f"SIGTERM not honoured while MLflow waited: {err[-2000:]}")
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 143, err
    assert "Traceback" not in err and lines == ["interrupted (SIGTERM); nothing half-written is kept"], err
    assert sorted(p.name for p in work.iterdir()) == ["a_file", "cwd", "exp.yaml"] and not any((work / "cwd").iterdir())


@pytest.mark.slow  # waits out the grace period (GRACE_SECONDS, 5 s)
def test_a_held_signal_interrupts_a_step_that_never_ends(monkeypatch):
    """Inside `deferred` (checkpoint, end of a run) a signal waits for the step, but not for ever: a step blocked on
    a server that never answers (here a socket read with no timeout) is interrupted, recorded as SIGTERM."""
    from memopt.core import interrupts

    monkeypatch.setattr(interrupts, "_last", [])  # which signal came last is process-wide: kept to this test
    monkeypatch.setattr(interrupts, "_cut", [])
    before = signal.getsignal(signal.SIGTERM)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        with socket.create_connection(silent.getsockname()) as client:
            client.settimeout(60)  # a backstop: without the grace period the read would end only here, in 60 s
            with pytest.raises(KeyboardInterrupt, match="SIGTERM"), interrupts.deferred():
                kill = subprocess.Popen(SIGTERM_ME)  # from another process, as a signal comes (to the main thread)
                client.recv(1)  # blocks: the server accepted nothing and sends nothing
    kill.wait()
    assert interrupts.interrupted_by() == "SIGTERM" and interrupts.exit_code() == 143 and interrupts.cut_short()
    assert signal.getsignal(signal.SIGTERM) is before and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@pytest.mark.slow  # waits out the grace period (GRACE_SECONDS, 5 s)
def test_a_store_call_cut_short_by_a_signal_is_not_waited_for_again(monkeypatch):
    """MLflow asks a tracking server that accepts and never answers; SIGTERM inside `deferred` ends the wait after
    the grace period, and every later call (the cleanup: ending the runs KILLED) fails at once instead of waiting."""
    import mlflow

    from memopt.core import interrupts
    from memopt.core.errors import TrackingError
    from memopt.tracking.store import GuardedStore, load_mlflow

    monkeypatch.setattr(interrupts, "_last", [])
    monkeypatch.setattr(interrupts, "_cut", [])
    load_mlflow()  # MLflow's HTTP retries bounded, as for any memopt store
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
        store = GuardedStore(mlflow.MlflowClient(uri), uri)
        with pytest.raises(KeyboardInterrupt), interrupts.deferred():
            kill = subprocess.Popen(SIGTERM_ME)
            store.set_terminated("0" * 32, "FINISHED")
        kill.wait()
        silent.settimeout(0.1)
        accepted = 0
        with contextlib.suppress(TimeoutError):
            while True:
                silent.accept()[0].close()
                accepted += 1
        assert accepted >= 1  # the first call did reach the server
        with pytest.raises(TrackingError, match=f"MLflow tracking store {uri}: set terminated did not answer"):
            store.set_terminated("0" * 32, "KILLED")
        with pytest.raises(TimeoutError):
            silent.accept()  # ...and the second never tried


@pytest.mark.slow  # ≈ 5 s: MLflow's (bounded) retries
def test_an_unreachable_server_prints_no_retry_chatter_before_its_one_error(tmp_path):
    """urllib3's "Retrying (...)" warnings (one per retry of MLflow's HTTP client) are not printed: the error line
    alone is (hostile probe B15)."""
    import os
    import subprocess
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    env = {**os.environ, "MLFLOW_TRACKING_URI": f"http://alice:hunter2-secret@127.0.0.1:{port}"}
    done = subprocess.run([sys.executable, "-m", "memopt", "export", "0123456789abcdef0123456789abcdef", "--format",
                           "text", "--out", "x"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, lines
    assert lines[0].startswith("error: ") and "hunter2" not in lines[0] and f"127.0.0.1:{port}" in lines[0]
