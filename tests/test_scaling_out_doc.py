"""docs/scaling-out.md can be followed as written: its command blocks, extracted and run verbatim, in order, start
PostgreSQL from nothing (the pgserver wheel's, and Debian's), create the role and databases, start the MLflow
server and two workers, and the two workers share one optimize run.

The walkthrough's ```bash blocks of "From nothing" are joined into one ``bash -e`` script (the blocks share
variables, as in one terminal); of the two "Which PostgreSQL" blocks, the variant's is kept. The test sets only
what a reader chooses before pasting: ``HOME`` (a fresh folder), free ports in ``PGPORT`` / ``MLFLOW_PORT``
(the doc's first block keeps them when set), the working directory (a folder holding ``experiments/team.yaml``)
and ``PATH`` / ``PYTHONPATH`` pointing at this checkout's memopt. As root (CI), the script runs as an everyday
user, as the doc says (PostgreSQL refuses root): uid 1000 in a user namespace of its own (``unshare --user``),
which still reads the interpreter and this checkout wherever root keeps them.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

DOC = ROOT / "docs" / "scaling-out.md"
PGSERVER_BLOCK, DEBIAN_BLOCK = "pgserver.__file__", "/usr/lib/postgresql/"

def walkthrough(variant: str) -> list[str]:
    """The command blocks of the doc's walkthrough, in order, with the other variant's PostgreSQL block left out."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## From nothing", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL)
    other = DEBIAN_BLOCK if variant == "pgserver" else PGSERVER_BLOCK
    return [b for b in blocks if other not in b]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_walkthrough_has_every_step():
    for variant in ("pgserver", "debian"):
        script = "\n".join(walkthrough(variant))
        for step in ("initdb", "pg_ctl", "CREATE ROLE memopt", "CREATE DATABASE mlflow", "CREATE DATABASE trials",
                     "mlflow server", "memopt worker experiments/team.yaml", "memopt optimize experiments/team.yaml",
                     "memopt export", "--tracking-uri"):
            assert step in script, (variant, step)
        assert script.count("memopt worker ") == 2
        assert (PGSERVER_BLOCK in script) == (variant == "pgserver")
        assert (DEBIAN_BLOCK in script) == (variant == "debian")


@pytest.mark.slow  # a PostgreSQL, an MLflow server, an optimize with two workers (CI runs it with -m slow)
@pytest.mark.parametrize("variant", ["pgserver", "debian"])
def test_the_docs_commands_run_verbatim_and_two_workers_share_one_run(variant):
    if variant == "debian" and not glob.glob(f"{DEBIAN_BLOCK}*/bin/initdb"):
        reason = "Debian's postgresql package is not installed (apt-get install postgresql)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"CI must run the Debian variant, but {reason}")
        pytest.skip(reason)
    as_user = _everyday_user()
    base = Path(tempfile.mkdtemp(prefix="memopt-scaling-out-"))
    home, work = base / "home", base / "work"
    (work / "experiments").mkdir(parents=True)
    home.mkdir()
    shutil.copy(ROOT / "experiments" / "team.yaml", work / "experiments" / "team.yaml")
    team = home / "memopt-team"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "PG", "MEMOPT_CACHE"))}
    env.update(HOME=str(home), PGPORT=str(_free_port()), MLFLOW_PORT=str(_free_port()), PYTHONPATH=str(ROOT),
               PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
               MEMOPT_CACHE_DIR=str(home / ".cache"), CI=env.get("CI", ""))
    script = "\n".join(walkthrough(variant))
    proc = subprocess.Popen([*as_user, "env", *(f"{k}={v}" for k, v in env.items()), "bash", "-e", "-c", script],
                            cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=1800)
        assert proc.returncode == 0, out[-4000:]
        summary = json.loads((team / "summary.json").read_text())
        run_id = summary["run_id"]
        lines = re.findall(rf"run {run_id} ended: (\d+) trial\(s\) scored", out)
        assert len(lines) == 2 and all(int(n) >= 1 for n in lines), out[-3000:]  # both workers worked for the run
        assert summary["status"] == "FINISHED" and len(summary["rounds"]) == 2
        # the workers scored the distinct configurations of the run's trials (a configuration tried again is not)
        assert sum(map(int, lines)) <= sum(len(r["trials"]) for r in summary["rounds"])
        assert f"--tracking-uri http://127.0.0.1:{env['MLFLOW_PORT']}" in out  # the printed export command
        assert (team / "tuned-prompts" / "mem0" / "extract.md").is_file()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        with_bin = _pg_bin(variant)
        if (team / "pgdata" / "postmaster.pid").exists() and with_bin:
            subprocess.run([*as_user, str(with_bin / "pg_ctl"), "-D", str(team / "pgdata"), "-m", "immediate",
                            "-w", "stop"], capture_output=True)
        pid = team / "mlflow.pid"
        if pid.exists():
            try:
                os.kill(int(pid.read_text().strip()), signal.SIGTERM)
            except (ProcessLookupError, ValueError):
                pass
        shutil.rmtree(base, ignore_errors=True)


def _everyday_user() -> list[str]:
    """The prefix that runs a command as a user who is not root: nothing when the tests are not root."""
    if os.geteuid() != 0:
        return []
    prefix = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    if subprocess.run([*prefix, "true"], capture_output=True).returncode != 0:
        pytest.fail("running as root, and `unshare --user` is not allowed here: run the tests as a user who is not "
                    "root (PostgreSQL refuses root)")
    return prefix


def _pg_bin(variant: str) -> Path | None:
    if variant == "debian":
        found = sorted(glob.glob(f"{DEBIAN_BLOCK}*/bin"))
        return Path(found[-1]) if found else None
    import pgserver

    return Path(pgserver.__file__).parent / "pginstall" / "bin"
