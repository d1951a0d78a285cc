"""Slow: the real ``local`` LM (SmolLM2-135M on llama.cpp's server) end to end, and that its server dies with memopt.

These need the ``local`` extra. Without it they skip with the reason, except under CI (``CI=true``),
where a missing extra is a broken install and fails them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memopt.core.errors import LMError
from memopt.lm import local
from memopt.lm.local import missing_local

pytestmark = pytest.mark.slow

MEMOPT = str(Path(sys.executable).with_name("memopt"))
SMOKE_DATA = "synthetic:conversations=1,sessions=2,seed=5"
STARTER = ("import sys, time\n"
           "from memopt.lm.build import make_lm\n"
           "from memopt.lm.local import local_server\n"
           "make_lm('local')\n"
           "print(local_server().pid, flush=True)\n"
           "if sys.stdin.readline() == 'exit\\n':\n"
           "    sys.exit(0)\n"
           "time.sleep(600)\n")


@pytest.fixture(autouse=True)
def local_extra() -> None:
    """Skip (fail under CI) when the local extra is not installed."""
    reason = missing_local()
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the local-LM tests, but {reason}")
    pytest.skip(f"the local LM is not installed here: {reason}")


def _memopt(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([MEMOPT, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_mem0_on_the_local_lm_runs_traced_and_attributed(tmp_path: Path) -> None:
    run = _memopt("run", "--pipeline", "mem0", "--data", SMOKE_DATA, "--lm", "local", "--limit", "3",
                  "--trace", "graphs", "--out", "results.json", cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["lm"] == "local" and results["simulated"] is False and len(results["cases"]) == 3
    replies = results["usage"]["task"]["replies"]
    why = (results["usage"]["task"], [c.get("error") for c in results["cases"]], run.stderr[-3000:])  # if it fails
    assert results["usage"]["task"]["calls"] >= 3 and replies["outputs"] >= 3, why
    assert results["metrics"]["malformed"] == sum("AdapterParseError" in c.get("error", "") for c in results["cases"])
    assert (run.returncode == 1) == (results["metrics"]["errored"] > 0.2 * 3)
    graphs = list((tmp_path / "graphs").glob("*.json"))
    assert len(graphs) == 1
    graph = json.loads(graphs[0].read_text())
    assert any(n.get("operation") == "extract" for n in graph["nodes"])
    attribute = _memopt("attribute", "--results", "results.json", "--trace", "graphs", "--judge-lm", "sim",
                        "--out", "attributions.jsonl", cwd=tmp_path)
    assert attribute.returncode == 0, attribute.stderr
    lines = (tmp_path / "attributions.jsonl").read_text().splitlines()
    failed = sum(c.get("correct") is False for c in results["cases"])
    assert len(lines) <= failed and f"{len(lines)} failed cases of mem0" in attribute.stdout


@pytest.mark.parametrize("ending", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT, "exit"],
                         ids=["SIGKILL", "SIGTERM", "SIGINT", "exit"])
def test_the_server_never_outlives_memopt(ending: signal.Signals | str) -> None:
    parent = subprocess.Popen([sys.executable, "-c", STARTER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        line = parent.stdout.readline()
        assert line.strip().isdigit(), parent.stderr.read()
        server = int(line)
        assert _alive(server)
        if ending == "exit":
            parent.stdin.write("exit\n")
            parent.stdin.flush()
        else:
            parent.send_signal(ending)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 5
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(server), f"the llama.cpp server {server} outlived its parent ({ending})"
    finally:
        parent.kill()
        parent.wait()


def test_a_server_that_cannot_start_is_one_error_with_its_stderr(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    bogus = tmp_path / "broken.gguf"
    bogus.write_text("not a model")
    monkeypatch.setattr(local, "model_file", lambda name="smollm2": bogus)
    logs = set(Path(local.tempfile.gettempdir()).glob("memopt-llama-*.log"))
    with pytest.raises(LMError, match=r"(?s)^LM 'local:smollm2': llama.cpp's server exited with code \d+ .*"
                                      r"Failed to load model from file: .*broken\.gguf"):
        local.local_server("smollm2")
    assert "smollm2" not in local._SERVERS
    assert set(Path(local.tempfile.gettempdir()).glob("memopt-llama-*.log")) == logs
