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

Anchors (`anchors`): before the runs, the same kind of server (no delay) answers a bare
``dspy.Predict`` (ChatAdapter: format, call, parse) of the quickstart's answer operation, serially,
once through DSPy's LiteLLM engine (the path memopt uses by default) and once through DSPy's own
default engine; their CPU per request is the floor a DSPy program pays on that path. They also
warm the imports (LiteLLM loads most of itself on its first call), so no row's CPU includes import
time. ``engines`` runs the experiment once per `memopt.lm.build.ENGINES` value (``lm.engine``).
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

__all__ = ["bench_latency", "anchors", "served"]

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


def _experiment(path: Path, url: str, concurrency: int, budget: int, rounds: int, model: str,
                engine: str = "litellm") -> Any:
    from memopt.experiment import load_experiment

    spec = f"openai/{model}@{url}"
    return load_experiment(path, {"lm.task": spec, "lm.judge": spec, "lm.reflection": spec,
                                  "lm.concurrency": concurrency, "lm.cache": True, "budget.max_lm_calls": budget,
                                  "rounds": rounds, "lm.engine": engine})


_MEMORIES = "\n".join(f"- [{day} May 2023] Caroline said she {thing}." for day, thing in enumerate(
    ["went to the LGBTQ support group", "painted a sunrise", "adopted a dog called Oscar", "ran a charity race",
     "started a pottery class", "moved to a flat near the park", "visited her mother in Sweden",
     "read 'Becoming Nicole'", "signed up for a counselling course", "camped at the lake with friends"], start=1))


def anchors(*, model: str = "gpt-4.1-mini", calls: int = 200) -> list[dict[str, Any]]:
    """CPU per request of a bare ``dspy.Predict`` (ChatAdapter) over `memopt serve`, per DSPy engine."""
    import dspy

    class Answer(dspy.Signature):
        memories: str = dspy.InputField()
        question: str = dspy.InputField()
        answer: str = dspy.OutputField()

    instructions = (Path(__file__).resolve().parents[2] / "prompts" / "mem0" / "answer.md")
    predict = dspy.Predict(Answer.with_instructions(instructions.read_text() if instructions.is_file() else
                                                    "Answer the question from the memories."))
    rows = []
    with served(delay=0.0) as server:
        for label, engine in (("dspy.Predict, LiteLLM engine", "litellm"), ("dspy.Predict, DSPy default", "auto")):
            lm = dspy.LM(f"openai/{model}", engine=engine, api_base=server.url, api_key="x", cache=False)

            def ask(n: int, lm: Any = lm) -> None:
                with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
                    for i in range(n):
                        predict(memories=_MEMORIES, question=f"When did Caroline start the pottery class? ({i})")

            ask(10)  # imports and connection set-up stay out of the measure
            cpu = time.process_time()
            ask(calls)
            rows.append({"run": label, "engine": engine, "requests": calls,
                         "cpu_ms_per_request": round(1000 * (time.process_time() - cpu) / calls, 2)})
    return rows


def _run(path: Path, delay: float, concurrency: int, budget: int, rounds: int, model: str,
         label: str, engine: str) -> dict[str, Any]:
    from memopt.optimize.run import make_scorer, run_experiment
    from memopt.systems.base import clear_ingest_cache
    from memopt.tracking import NullTracker

    clear_ingest_cache()
    with served(delay=delay) as server:
        experiment = _experiment(path, server.url, concurrency, budget, rounds, model, engine)
        scorer = make_scorer(experiment)
        started, cpu = time.perf_counter(), time.process_time()
        summary = run_experiment(experiment, tracker=NullTracker(), scorer=scorer)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    total = summary["usage"]["total"]
    requests = server.requests or 0
    ideal = requests * delay / concurrency
    return {"run": label, "engine": engine, "concurrency": concurrency, "delay_s": delay, "wall_s": round(wall, 1),
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
                  model: str = "gpt-4.1-mini", engines: list[str] | None = None, anchor_calls: int = 200,
                  profile: bool = False) -> dict[str, Any]:
    """``anchors``; ``runs`` per engine and concurrency (a first run on a fresh cache, then again on it when
    ``repeat``); with ``profile``, ``breakdown`` per engine of the first run's CPU (`memopt.bench.breakdown`)."""
    from memopt.bench.breakdown import breakdown
    from memopt.lm.cache import configure_cache

    report: dict[str, Any] = {"anchors": anchors(model=model, calls=anchor_calls) if anchor_calls else [],
                              "runs": [], "breakdown": {}}
    for engine in engines or ["litellm"]:
        for n in concurrency or [16]:
            with tempfile.TemporaryDirectory(prefix="memopt-bench-cache-") as cache:
                configure_cache(cache)
                first = _run(experiment, delay, n, budget, rounds, model, "first", engine)
                report["runs"].append(first)
                if repeat:
                    report["runs"].append(_run(experiment, delay, n, budget, rounds, model, "again (cache)", engine))
            if profile and first["requests"]:
                def profiled(n: int = n, engine: str = engine, first: dict[str, Any] = first) -> tuple[int, float]:
                    with tempfile.TemporaryDirectory(prefix="memopt-bench-cache-") as cache:
                        configure_cache(cache)
                        _run(experiment, delay, n, budget, rounds, model, "profiled", engine)
                    return first["requests"], first["cpu_ms_per_request"]

                report["breakdown"][f"{engine}, concurrency {n}"] = breakdown(profiled)
    return report
