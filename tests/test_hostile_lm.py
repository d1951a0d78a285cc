"""Hostile LM setups and runs: a dying local server, drift on --resume, bad LM configuration, secrets in prompts.

Each CLI case runs the real console entry point (`memopt.cli.main`) in-process from an empty working
directory and asserts the exit code, exactly one ``error: ...`` line on stderr naming the culprit,
no traceback, and that nothing outside the output folder changed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memopt.cli import main
from memopt.errors import LMError

MEMOPT = str(Path(sys.executable).with_name("memopt"))
DATA = "synthetic:conversations=2,sessions=2,seed=1,questions_per_conversation=6"
OPT_DATA = "synthetic:conversations=4,sessions=2,seed=1,questions_per_conversation=6"


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")}


def _run(argv: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["memopt", *argv])
    with pytest.raises(SystemExit) as exit_:
        main()
    captured = capsys.readouterr()
    return exit_.value.code, captured.out, captured.err


def _one_error(code: int, out: str, err: str, expected_code: int, *names: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == expected_code, (code, out, err)
    assert "Traceback" not in out + err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


# ---------------------------------------------------------------- item 1: the local server dies

def _stand_in_server(tmp_path: Path):
    """A real OpenAI-compatible server process (`memopt serve`, SimLM), registered as this process's local server."""
    from memopt.lm.local import LocalServer

    proc = subprocess.Popen([MEMOPT, "serve", "--port", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    url = proc.stdout.readline().split("serving at ")[1].split()[0]
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    return LocalServer("smollm2", proc, port, tmp_path / "server.log")


@pytest.mark.parametrize(("signum", "named"), [
    (signal.SIGSEGV, "signal 11 (SIGSEGV): llama-cpp-python's build crashed on this CPU"),
    (signal.SIGKILL, "signal 9 (SIGKILL)"),
    (signal.SIGABRT, "signal 6 (SIGABRT)"),
])
def test_a_local_server_killed_by_a_signal_is_named_with_what_to_do(signum, named, tmp_path, monkeypatch):
    """The server answers over HTTP, is killed by a signal, and the next call says how it died (not 'run again')."""
    from memopt.lm import local
    from memopt.lm.config import explain_lm_error

    server = _stand_in_server(tmp_path)
    monkeypatch.setitem(local._SERVERS, "smollm2", server)
    try:
        lm = local.llama_cpp_lm(server.url, "smollm2", local="smollm2", timeout=30)
        assert lm("Say hello.")  # a real reply over HTTP
        os.kill(server.pid, signum)
        with pytest.raises(LMError) as caught:
            lm("Say hello again.")
    finally:
        server.process.kill()
        server.process.wait()
    message = str(caught.value)
    assert named in message and "\n" not in message, message
    assert f"pid {server.pid}" in message and "run again" not in message
    assert (local.REBUILD_HINT in message) == (signum == signal.SIGSEGV)
    explained = str(explain_lm_error("local", ConnectionError("connection refused")))
    assert named in explained and "run again" not in explained, explained


def test_exit_codes_and_unknown_signals_are_named():
    from memopt.lm.local import PORTABLE_FLAGS, REBUILD_HINT, how_it_died

    assert how_it_died(3) == "exited with code 3"
    assert how_it_died(-signal.SIGILL).startswith("was killed by signal 4 (SIGILL): llama-cpp-python's build")
    assert how_it_died(-signal.SIGTERM) == "was killed by signal 15 (SIGTERM)"
    assert how_it_died(-200) == "was killed by signal 200 (unknown signal)"
    assert "--no-cache-dir" in REBUILD_HINT and PORTABLE_FLAGS in REBUILD_HINT and "GGML_NATIVE=OFF" in PORTABLE_FLAGS


def test_the_portable_build_script_builds_the_pinned_version_without_native_tuning():
    """`.ci/install-llama-cpp` (run by `.ci/run`) builds the version the `local` extra pins, with the same flags
    memopt's crash message gives, past pip's cache."""
    import tomllib

    from memopt.lm.local import LLAMA_CPP_VERSION, PORTABLE_FLAGS

    root = Path(__file__).resolve().parents[1]
    script = (root / ".ci" / "install-llama-cpp").read_text()
    pins = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["local"]
    assert f"llama-cpp-python[server]=={LLAMA_CPP_VERSION}" in pins
    assert f'version="${{LLAMA_CPP_VERSION:-{LLAMA_CPP_VERSION}}}"' in script
    assert f'flags="{PORTABLE_FLAGS}"' in script
    assert "--no-cache-dir" in script and "--no-index" in script
    assert "bash .ci/install-llama-cpp" in (root / ".ci" / "run").read_text()


@pytest.mark.slow
def test_the_real_llama_cpp_server_killed_by_sigsegv_is_reported_as_a_crash_of_its_build():
    """On the real server (needs memopt[local]): a completion, then SIGSEGV, then one LMError with the rebuild hint."""
    from memopt.lm import local
    from memopt.lm.config import make_lm

    if local.missing_local() and os.environ.get("CI") != "true":
        pytest.skip(local.missing_local())
    lm = make_lm("local")
    try:
        assert lm("Say hello.")
        server = local._SERVERS["smollm2"]
        os.kill(server.pid, signal.SIGSEGV)
        with pytest.raises(LMError, match=r"signal 11 \(SIGSEGV\): llama-cpp-python's build crashed") as caught:
            lm("Say hello again.")
        assert local.REBUILD_HINT in str(caught.value)
    finally:
        local.stop_local_servers()
