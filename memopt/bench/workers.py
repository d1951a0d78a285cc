"""`memopt bench workers`: wall time of one optimize round with 1, 2, 3, ... `memopt worker` processes.

For each worker count: start `memopt serve --delay D` (SimLM over HTTP, a process of its own), run
`memopt optimize` on a small experiment (mem0 on 4 synthetic conversations, one round of ``--trials``
trials in batches of ``--batch``, reply cache off) with ``--storage`` pointing at a fresh Optuna storage
(a SQLite file per row unless ``--storage`` names one), and N `memopt worker` processes, every role at
``openai/sim@URL``. Reported per row: the round's wall seconds (the round's own record: attribution,
proposals, trials and report; round 0 excluded), how many of the round's trials each worker scored, the
LM calls the coordinator counted next to the chat requests the server answered (equal: nothing lost or
counted twice), the final val F1 (the same in every row), and the ratio of the round's wall time to the
first row's. MLflow goes to a throw-away SQLite file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from memopt.bench.latency import served

__all__ = ["bench_workers", "SMALL_EXPERIMENT"]

SMALL_EXPERIMENT = """\
name: bench-workers
pipeline: mem0
data:
  source: "synthetic:conversations=4,sessions=3,seed=1"
  split: [0.5, 0.25, 0.25]
lm: {{task: "{lm}", judge: "{lm}", reflection: "{lm}", concurrency: {concurrency}, cache: false}}
optimizer: {{name: memtrace, candidates: 4, ops_per_round: 1, trials: {trials}, trial_batch: {batch},
             search: {{top_k: [5, 10, 20]}}}}
rounds: 1
seed: 3
mlflow: {{experiment: bench-workers, traces: none}}
"""


def _memopt(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "memopt", *args], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})


def _one(workers: int, *, delay: float, concurrency: int, trials: int, batch: int, storage: str | None,
         root: Path) -> dict[str, Any]:
    from memopt.optimize.storage import open_storage

    run_dir = root / f"w{workers}"
    run_dir.mkdir()
    url = storage or f"sqlite:///{run_dir / 'trials.db'}"
    open_storage(url)  # created before the processes start: a worker never creates a storage
    with served(delay=delay) as server:
        exp = run_dir / "experiment.yaml"
        exp.write_text(SMALL_EXPERIMENT.format(lm=f"openai/sim@{server.url}", concurrency=concurrency,
                                               trials=trials, batch=batch), encoding="utf-8")
        coordinator = _memopt(["optimize", str(exp), "--tracking-uri", f"sqlite:///{run_dir / 'mlflow.db'}",
                               "--storage", url, "-o", str(run_dir / "summary.json")], run_dir)
        procs = [_memopt(["worker", str(exp), "--storage", url, "--name", f"w{i + 1}"], run_dir)
                 for i in range(workers)]
        for proc in [coordinator, *procs]:
            _, err = proc.communicate(timeout=3600)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(proc.args[3:5])} failed: {err[-2000:]}")
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    import optuna

    opened = open_storage(url)
    name = next(n for n in optuna.get_all_study_names(opened) if n.startswith(f"memopt:{summary['run_id']}:round"))
    done = [t for t in optuna.load_study(study_name=name, storage=opened).get_trials(deepcopy=False)
            if t.state.name == "COMPLETE"]
    by_worker = {f"w{i + 1}": sum(t.user_attrs.get("memopt.worker") == f"w{i + 1}" for t in done)
                 for i in range(workers)}
    return {"workers": workers, "round_s": summary["rounds"][-1]["seconds"], "trials_scored": len(done),
            "by_worker": " ".join(f"{k}:{v}" for k, v in by_worker.items()), "lm_calls": summary["lm_calls"],
            "server_requests": server.requests, "val_f1": summary["final"]["val_f1"]}


def bench_workers(*, workers: list[int], delay: float, concurrency: int = 4, trials: int = 12, batch: int = 6,
                  storage: str | None = None) -> list[dict[str, Any]]:
    """One row per worker count: the round's wall seconds and its ratio to the first row's."""
    with tempfile.TemporaryDirectory(prefix="memopt-bench-workers-") as tmp:
        rows = [_one(n, delay=delay, concurrency=concurrency, trials=trials, batch=batch, storage=storage,
                     root=Path(tmp)) for n in workers]
    for row in rows:
        row["ratio"] = round(row["round_s"] / rows[0]["round_s"], 2)
    return rows
