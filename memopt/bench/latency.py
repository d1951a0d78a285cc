"""`memopt bench latency`: how well an optimization hides LM latency, through the real HTTP path.

For each concurrency: start `memopt serve --delay D` (SimLM behind its OpenAI-compatible server, in
a process of its own, like a remote API), run the experiment (the quickstart by default, with its
budget and rounds cut to fit) with every role at ``openai/MODEL@URL`` (DSPy → LiteLLM → HTTP) and a
fresh reply cache, and stop the server, which reports how many chat requests it answered. MODEL is
``gpt-4.1-mini`` by default: a name LiteLLM prices, as a hosted API's is (SimLM's server answers any
name; the cost column is what SimLM-sized prompts and replies would cost at that model's prices,
and LiteLLM spends about 4 ms more CPU per call on a name it cannot price). Then run
the same experiment again against a new server with the same cache: every reply should come from
the cache, so that server should answer 0 requests.

Reported: wall seconds, requests the server answered, LM calls (asked, made, from the cache), the
most calls in flight per role (task/judge/reflection: the concurrency is per role, so while a round's
questions run, up to twice the setting are in flight, answers and verdicts), ``ratio = wall /
(requests × delay / concurrency)`` (1.0 would mean every slot was busy waiting on the server the whole
time), and the CPU time this process spent per request (DSPy, LiteLLM and memopt's own work; one
core's worth at most, under the GIL): when requests × that CPU time exceeds requests × delay /
concurrency, the run is bound by the client's CPU, not by the LM's latency. MLflow is left out (a
`NullTracker`): the bench measures the LM path, not the tracking store.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = ["bench_latency", "served"]

_URL = re.compile(r"serving at (http://\S+/v1)")
_STOPPED = re.compile(r"stopped: (\d+) requests, (\d+) injected failures, (\d+) malformed replies")


class served:
    """``with served(delay=0.2) as server: server.url`` runs `memopt serve` in a subprocess; after the block,
    ``requests``, ``injected_failures`` and ``malformed`` are its counters."""

    def __init__(self, *, delay: float = 0.0, seed: int = 0, extra: tuple[str, ...] = ()) -> None:
        self.args = [sys.executable, "-m", "memopt", "serve", "--port", "0", "--delay", str(delay), "--seed",
                     str(seed), *extra]
        self.url = ""
        self.requests: int | None = None
        self.injected_failures: int | None = None
        self.malformed: int | None = None
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> served:
        self._process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        found = _URL.search(line)
        if found is None:
            self._process.kill()
            raise RuntimeError(f"memopt serve did not start: {line}{self._process.stderr.read()[-2000:]}")
        self.url = found.group(1)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._process is not None
        self._process.send_signal(signal.SIGTERM)
        out, _ = self._process.communicate(timeout=30)
        found = _STOPPED.search(out)
        if found:
            self.requests, self.injected_failures, self.malformed = (int(n) for n in found.groups())


def _experiment(path: Path, url: str, concurrency: int, budget: int, rounds: int, model: str) -> Any:
    from memopt.experiment import load_experiment

    spec = f"openai/{model}@{url}"
    return load_experiment(path, {"lm.task": spec, "lm.judge": spec, "lm.reflection": spec,
                                  "lm.concurrency": concurrency, "lm.cache": True, "budget.max_lm_calls": budget,
                                  "rounds": rounds})


def _run(path: Path, delay: float, concurrency: int, budget: int, rounds: int, model: str,
         label: str) -> dict[str, Any]:
    from memopt.optimize.run import make_scorer, run_experiment
    from memopt.system import clear_ingest_cache
    from memopt.tracking import NullTracker

    clear_ingest_cache()
    with served(delay=delay) as server:
        experiment = _experiment(path, server.url, concurrency, budget, rounds, model)
        scorer = make_scorer(experiment)
        started, cpu = time.perf_counter(), time.process_time()
        summary = run_experiment(experiment, tracker=NullTracker(), scorer=scorer)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    total = summary["usage"]["total"]
    requests = server.requests or 0
    ideal = requests * delay / concurrency
    return {"run": label, "concurrency": concurrency, "delay_s": delay, "wall_s": round(wall, 1),
            "requests": requests, "calls": total["calls"], "made": total["made"], "cached": total["cached"],
            "cost": total["cost"],
            "errored_cases": sum(sum(r["errored"].values()) for r in summary["rounds"]),
            "peak_in_flight": "/".join(str(scorer.slots[r].peak) for r in ("task", "judge", "reflection")),
            "rounds": len(summary["rounds"]),
            "test_f1": summary["final"]["test_f1"],
            "cpu_ms_per_request": round(1000 * cpu / requests, 1) if requests else None,
            "ratio": round(wall / ideal, 2) if ideal else None}


def bench_latency(*, delay: float = 0.2, concurrency: list[int] | None = None, budget: int = 2500, rounds: int = 1,
                  experiment: Path = Path("experiments/quickstart.yaml"), repeat: bool = True,
                  model: str = "gpt-4.1-mini") -> list[dict[str, Any]]:
    """Rows per concurrency: a first run with a fresh cache, then (``repeat``) the same run served from the cache."""
    from memopt.lm.cache import configure_cache

    rows = []
    for n in concurrency or [16]:
        with tempfile.TemporaryDirectory(prefix="memopt-bench-cache-") as cache:
            configure_cache(cache)
            rows.append(_run(experiment, delay, n, budget, rounds, model, "first"))
            if repeat:
                rows.append(_run(experiment, delay, n, budget, rounds, model, "again (cache)"))
    return rows
