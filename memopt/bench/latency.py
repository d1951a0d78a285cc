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
core's worth at most, under the GIL; ``cpu_ms_per_call`` is the same CPU over every LM call asked,
replies from the reply cache included, which cost CPU but no request): when requests × that CPU time
exceeds requests × delay / concurrency, the run is bound by the client's CPU, not by the LM's latency.
MLflow is left out (a `NullTracker`): the bench measures the LM path, not the tracking store.

Anchors (`anchors`): before the runs and again after them (the load of a shared machine drifts), the
same kind of server (no delay) answers a bare ``dspy.Predict`` (ChatAdapter: format, call, parse) of
the quickstart's answer operation, serially, through DSPy's LiteLLM engine (the path memopt uses by
default) and through DSPy's own default engine, each without and with DSPy's reply cache (a fresh
one: every call a miss and a store, as in a first run); their CPU per request is the floor a DSPy
program pays on that path. Then the LiteLLM engine with the cache from as many threads as the first
concurrency, against a server with the runs' delay: its wall / ideal is the ratio a bare DSPy
program reaches there. A run's ``vs_anchor`` is its CPU per request over the mean of its engine's
serial cached anchor (the runs use the cache too); ``vs_threads`` is the same over the threaded anchor
at its concurrency (LiteLLM engine), which pays the thread switching a run at that concurrency pays. The
anchors warm DSPy's and LiteLLM's imports and an unreported small run (``warm``) the experiment's own
(bm25s, networkx ...), so no row's CPU includes import time. ``engines`` runs the experiment once per
`memopt.lm.build.ENGINES` value (``lm.engine``).
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

__all__ = ["bench_latency", "anchors", "served", "versus_anchor"]

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
    from memopt.optimize.experiment import load_experiment

    spec = f"openai/{model}@{url}"
    return load_experiment(path, {"lm.task": spec, "lm.judge": spec, "lm.reflection": spec,
                                  "lm.concurrency": concurrency, "lm.cache": True, "budget.max_lm_calls": budget,
                                  "rounds": rounds, "lm.engine": engine})


_MEMORIES = "\n".join(f"- [{day} May 2023] Caroline said she {thing}." for day, thing in enumerate(
    ["went to the LGBTQ support group", "painted a sunrise", "adopted a dog called Oscar", "ran a charity race",
     "started a pottery class", "moved to a flat near the park", "visited her mother in Sweden",
     "read 'Becoming Nicole'", "signed up for a counselling course", "camped at the lake with friends"], start=1))


def anchors(*, model: str = "gpt-4.1-mini", calls: int = 200, concurrency: int = 0, delay: float = 0.0,
            when: str = "") -> list[dict[str, Any]]:
    """CPU per request of a bare ``dspy.Predict`` (ChatAdapter) over `memopt serve`: serially, per DSPy engine,
    without and with DSPy's reply cache (a fresh one, as the runs use); with ``concurrency``, also through the
    LiteLLM engine and the cache from that many threads against a server waiting ``delay`` s, with its wall / ideal."""
    import dspy

    from memopt.core.parallel import worker_pool
    from memopt.lm.cache import configure_cache

    class Answer(dspy.Signature):
        memories: str = dspy.InputField()
        question: str = dspy.InputField()
        answer: str = dspy.OutputField()

    instructions = (Path(__file__).resolve().parents[2] / "prompts" / "mem0" / "answer.md")
    predict = dspy.Predict(Answer.with_instructions(instructions.read_text() if instructions.is_file() else
                                                    "Answer the question from the memories."))
    rows = []

    def ask(lm: Any, i: int, tag: str = "") -> None:
        with dspy.context(lm=lm, adapter=dspy.ChatAdapter()):
            predict(memories=_MEMORIES, question=f"When did Caroline start the pottery class? ({when}{tag}{i})")

    with tempfile.TemporaryDirectory(prefix="memopt-bench-cache-") as cache:
        configure_cache(cache)
        with served(delay=0.0) as server:
            for label, engine, cached in _ANCHORS:
                lm = dspy.LM(f"openai/{model}", engine=engine, api_base=server.url, api_key="x", cache=cached)
                for i in range(10):  # imports and connection set-up stay out of the measure
                    ask(lm, -i - 1, label)
                cpu = time.process_time()
                for i in range(calls):
                    ask(lm, i, label)
                rows.append({"run": label, "engine": engine, "cache": cached, "when": when, "threads": 1,
                             "delay_s": 0.0, "requests": calls,
                             "cpu_ms_per_request": round(1000 * (time.process_time() - cpu) / calls, 2), "ratio": None})
        if concurrency:
            with served(delay=delay) as server, worker_pool(concurrency) as pool:
                lm = dspy.LM(f"openai/{model}", engine="litellm", api_base=server.url, api_key="x", cache=True)
                n = max(calls, 4 * concurrency)
                list(pool.map(lambda i: ask(lm, -i - 1, "threads"), range(concurrency)))
                started, cpu = time.perf_counter(), time.process_time()
                list(pool.map(lambda i: ask(lm, i, "threads"), range(n)))
                wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            ideal = n * delay / concurrency
            rows.append({"run": f"{_ANCHORS[1][0]}, {concurrency} threads", "engine": "litellm", "cache": True,
                         "when": when, "threads": concurrency, "delay_s": delay, "requests": n,
                         "cpu_ms_per_request": round(1000 * cpu / n, 2),
                         "ratio": round(wall / ideal, 2) if ideal else None})
    return rows


_ANCHORS = (("dspy.Predict, LiteLLM engine", "litellm", False),
            ("dspy.Predict, LiteLLM engine, cache", "litellm", True),
            ("dspy.Predict, DSPy default", "auto", False),
            ("dspy.Predict, DSPy default, cache", "auto", True))
_ANCHOR_OF = {"litellm": "dspy.Predict, LiteLLM engine, cache", "dspy": "dspy.Predict, DSPy default, cache"}


def versus_anchor(runs: list[dict[str, Any]], floor: list[dict[str, Any]]) -> None:
    """Set each run's ``vs_anchor``: its CPU per request over the mean of its engine's serial cached anchor rows
    (measured before and after the runs: the load of a shared machine drifts); and ``vs_threads``: over the mean
    of the threaded anchor rows at its concurrency (LiteLLM engine), which pay the same thread switching."""
    def over(run: dict[str, Any], same: list[float]) -> float | None:
        mean = sum(same) / len(same) if same else 0
        return round(run["cpu_ms_per_request"] / mean, 2) if mean and run["cpu_ms_per_request"] else None

    for run in runs:
        run["vs_anchor"] = over(run, [a["cpu_ms_per_request"] for a in floor
                                      if a["run"] == _ANCHOR_OF.get(run["engine"])])
        run["vs_threads"] = over(run, [a["cpu_ms_per_request"] for a in floor if run["engine"] == "litellm"
                                       and a.get("threads", 1) > 1 and a["threads"] == run.get("concurrency")])


def _run(path: Path, delay: float, concurrency: int, budget: int, rounds: int, model: str,
         label: str, engine: str) -> dict[str, Any]:
    from memopt.optimize.loop import make_scorer, run_experiment
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
            "cpu_ms_per_call": round(1000 * cpu / total["calls"], 1) if total["calls"] else None,
            "ratio": round(wall / ideal, 2) if ideal else None}


def bench_latency(*, delay: float = 0.2, concurrency: list[int] | None = None, budget: int = 2500, rounds: int = 1,
                  experiment: Path = Path("experiments/quickstart.yaml"), repeat: bool = True,
                  model: str = "gpt-4.1-mini", engines: list[str] | None = None, anchor_calls: int = 200,
                  profile: bool = False, warm: bool = True) -> dict[str, Any]:
    """``anchors`` before and after the runs; ``runs`` per engine and concurrency (a first run on a fresh cache, then
    again on it when ``repeat``), each with ``vs_anchor`` (`versus_anchor`); with ``warm``, an unreported small run
    first, so no row's CPU includes the experiment's first imports; with ``profile``, ``breakdown`` per engine of the
    first run's CPU (`memopt.bench.breakdown`)."""
    from memopt.bench.breakdown import breakdown
    from memopt.lm.cache import configure_cache
    from memopt.optimize.experiment import load_experiment

    load_experiment(experiment)  # a missing or bad file is one error now, not after the anchors' calls
    levels = concurrency or [16]
    floor = anchors(model=model, calls=anchor_calls, concurrency=levels[0], delay=delay, when="before") \
        if anchor_calls else []
    report: dict[str, Any] = {"anchors": floor, "runs": [], "breakdown": {}}
    if warm:
        with tempfile.TemporaryDirectory(prefix="memopt-bench-cache-") as cache:
            configure_cache(cache)
            _run(experiment, 0.0, levels[0], min(budget, 150), 1, model, "warm-up", (engines or ["litellm"])[0])
    for engine in engines or ["litellm"]:
        for n in levels:
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
    if anchor_calls:
        floor += anchors(model=model, calls=anchor_calls, concurrency=levels[0], delay=delay, when="after")
    versus_anchor(report["runs"], floor)
    return report
