"""A resumed run is the uninterrupted run: interrupted (SIGINT) at several points of a round, then resumed, it exports
byte-identical prompts and knobs and takes the same decisions, round by round (attribution sample, replayed cases,
candidates, trials), because everything a round's decisions depend on is in the checkpoint. What it spends may
differ: the ingestion cache of the killed process (memory states, in memory only) is not, so the resumed round
ingests again what it held.

Each interrupted run is a real `memopt optimize` process that sends itself SIGINT when it reaches the point (the
driver of tests/optimize/test_interrupts.py); the experiment samples few attributions per round, so a round's sample
depends on what the rounds before it attributed. Slow: about 8 small optimize processes.
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
name: exact
pipeline: mem0
data: {source: "synthetic:conversations=6,sessions=3,seed=4,questions_per_conversation=6", split: [0.5, 0.25, 0.25]}
attribution: {method: memtrace, sample: 3}
optimizer: {name: memtrace, candidates: 2, ops_per_round: 1, trials: 3, search: {top_k: [5, 10]}}
rounds: 3
seed: 5
mlflow: {experiment: exact, traces: none}
"""

# `memopt` sending itself SIGINT when round ``round`` reaches ``phase``.
DRIVER = """\
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
phase, when = sys.argv[1], int(sys.argv[2])
import memopt.optimize.reflective as reflective, memopt.optimize.scoring as scoring, memopt.tracking as tracking
now = {"round": 0}
step = reflective.ReflectiveOptimizer.step
def counted(self, system, round_index, **kwargs):
    now["round"] = round_index
    return step(self, system, round_index, **kwargs)
reflective.ReflectiveOptimizer.step = counted

def wrap(owner, name, hit):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        if now["round"] == when and hit(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGINT)
        return original(*args, **kwargs)
    setattr(owner, name, wrapper)

if phase == "attribution":
    wrap(reflective.ReflectiveOptimizer, "_attribute", lambda *a, **k: True)
elif phase == "proposal":
    wrap(reflective.ReflectiveOptimizer, "_propose", lambda *a, **k: True)
elif phase == "selection":
    wrap(scoring.Scorer, "score", lambda self, system, conversations, *, judged, **k: not judged)
elif phase == "logging":
    wrap(tracking.RoundLog, "log_metrics", lambda self, metrics, step=None: True)
sys.argv = ["memopt", *sys.argv[3:]]
from memopt.cli import main
main()
"""


def _memopt(args: list[str], cwd: Path, *, phase: str | None = None, round_index: int = 0) -> \
        subprocess.CompletedProcess:
    command = [sys.executable, "-c", DRIVER, phase, str(round_index), *args] if phase else \
        [sys.executable, "-m", "memopt", *args]
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=900, env=env)


def _exported(cwd: Path, run_id: str, uri: str) -> dict[str, bytes]:
    out = cwd / f"export-{run_id}"
    done = _memopt(["export", run_id, "--format", "text", "--out", str(out), "--tracking-uri", uri, "--force"], cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
            and p.name != "knobs.yaml"} | {"knobs": _knobs(out)}


def _knobs(out: Path) -> bytes:
    import yaml

    found = next(out.rglob("knobs.yaml"))
    return json.dumps(yaml.safe_load(found.read_text())["knobs"], sort_keys=True).encode()


def _rounds(summary: dict) -> list[dict]:
    keep = ("round", "val_f1", "test_f1", "val_judge", "accepted", "blamed_ops", "attribution", "prompt_versions",
            "knobs", "decision", "commit_messages", "candidates", "trials")
    return [{k: r.get(k) for k in keep} for r in summary["rounds"]]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[Path, dict, dict]:
    cwd = tmp_path_factory.mktemp("exact")
    (cwd / "exp.yaml").write_text(EXPERIMENT)
    uri = f"sqlite:///{cwd}/mlflow.db"
    done = _memopt(["optimize", "exp.yaml", "--tracking-uri", uri, "--out", "summary.json"], cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((cwd / "summary.json").read_text())
    return cwd, summary, _exported(cwd, summary["run_id"], uri)


@pytest.mark.parametrize("phase, round_index", [("attribution", 2), ("proposal", 2), ("selection", 2),
                                                ("logging", 2), ("selection", 3)])
def test_a_run_interrupted_anywhere_in_a_round_resumes_to_the_same_prompts(phase, round_index, uninterrupted,
                                                                            tmp_path):
    reference, summary, exported = uninterrupted
    shutil.copy(reference / "exp.yaml", tmp_path / "exp.yaml")
    uri = f"sqlite:///{tmp_path}/mlflow.db"
    args = ["optimize", "exp.yaml", "--tracking-uri", uri]
    killed = _memopt(args, tmp_path, phase=phase, round_index=round_index)
    assert killed.returncode == 128 + signal.SIGINT, killed.stderr[-3000:]
    run_id = next(line for line in killed.stderr.splitlines() if "--resume" in line).split("--resume ")[1].split()[0]
    resumed = _memopt([*args, "--resume", run_id, "--out", "summary.json"], tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    again = json.loads((tmp_path / "summary.json").read_text())
    assert _rounds(again) == _rounds(summary)  # every decision, sample and count of every round
    assert (again["final"], again["best_knobs"]) == (summary["final"], summary["best_knobs"])
    # LM calls may only grow: the resumed process re-ingests what the killed one held in its ingestion cache
    assert again["lm_calls"] >= summary["lm_calls"]
    assert _exported(tmp_path, run_id, uri) == exported  # byte for byte
