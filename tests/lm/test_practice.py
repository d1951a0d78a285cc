"""Real LMs in practice, through the real DSPy → LiteLLM → HTTP path against SimLM's server: concurrency
gives the serial results, the reply cache makes a repeated run free, every call is counted and priced,
`--max-cost` stops cleanly, `--estimate` predicts a real run."""

from __future__ import annotations

import io
import json
import threading

import pytest

from memopt.core.errors import ConfigError
from memopt.evaluate.run import CaseResult, case_metrics
from memopt.lm.spec import parse_lm_spec, parse_lm_specs
from memopt.optimize.experiment import load_experiment
from memopt.simlm.server import SimServer
from memopt.tracking import NullTracker
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
TINY = "synthetic:conversations=4,sessions=2,seed=0,questions_per_conversation=6"
PRICED = "openai/gpt-4.1-mini"  # a name LiteLLM's cost map prices; SimLM's server answers any model name


def _experiment(url: str | None, *, model: str = PRICED, concurrency: int | None = None, **overrides):
    spec = f"{model}@{url}" if url else "sim"
    return load_experiment(QUICKSTART, {"data.source": TINY, "rounds": 1, "optimizer.candidates": 2,
                                        "optimizer.trials": 4, "optimizer.trial_batch": 2, "lm.task": spec,
                                        "lm.judge": spec, "lm.reflection": spec, "lm.concurrency": concurrency,
                                        **overrides})


class Recorder(NullTracker):
    """Keeps what a run logs (state, attributions) in memory instead of MLflow."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def log_text(self, text: str, artifact_file: str) -> None:
        """Keep the text."""
        self.files[artifact_file] = text

    def log_dict(self, data, artifact_file: str) -> None:
        """Keep the data as JSON."""
        self.files[artifact_file] = json.dumps(data, sort_keys=True)


def _optimize(experiment, cache_dir):
    from memopt.lm.cache import configure_cache
    from memopt.optimize.loop import make_scorer, run_experiment
    from memopt.systems.base import clear_ingest_cache

    clear_ingest_cache()
    configure_cache(cache_dir)
    recorder, scorer = Recorder(), make_scorer(experiment)
    summary = run_experiment(experiment, tracker=recorder, scorer=scorer)
    return summary, recorder, scorer


def _what_it_decided(summary, recorder) -> dict:
    state = json.loads(recorder.files["state/state.json"])
    # not compared: time, and billed tokens (two identical requests in flight at once both go out; one after the
    # other, the second comes from the cache)
    rounds = [{k: v for k, v in r.items() if k not in ("seconds", "usage", "tokens")} for r in summary["rounds"]]
    attributions = [{k: v for k, v in json.loads(line).items() if k != "seconds"}
                    for line in recorder.files["attributions.jsonl"].splitlines()]
    return {"baseline": summary["baseline"], "final": summary["final"], "rounds": rounds,
            "best": state["best_instructions"], "knobs": state["best_knobs"], "attributions": attributions,
            "feedback": [r["feedback"] for r in state["records"]]}


@pytest.mark.slow  # over 4 s: two optimize runs over HTTP (CI runs it with -m slow)
def test_concurrent_optimize_over_http_equals_serial_caches_and_matches_its_estimate(tmp_path):
    from memopt.optimize.estimate import estimate_experiment

    estimate = estimate_experiment(_experiment("http://127.0.0.1:9/v1"))
    with SimServer() as serial_server:
        serial, serial_log, _ = _optimize(_experiment(serial_server.url, concurrency=1, **{"lm.cache": False}),
                                          tmp_path / "a")
    with SimServer() as server:
        concurrent, concurrent_log, scorer = _optimize(_experiment(server.url, concurrency=6), tmp_path / "b")
    with SimServer() as again_server:
        again, again_log, _ = _optimize(_experiment(again_server.url, concurrency=6), tmp_path / "b")

    decided = _what_it_decided(serial, serial_log)
    assert decided["attributions"] and decided["rounds"][0]["blamed_ops"]
    assert _what_it_decided(concurrent, concurrent_log) == decided
    assert 1 < max(s.peak for s in scorer.slots.values()) <= 6
    # every call is counted, reporting included; what went out is what the server answered
    total = concurrent["usage"]["total"]
    assert total["calls"] == sum(concurrent["usage"][m]["calls"] for m in concurrent["usage"] if m != "total")
    assert concurrent["usage"]["report_task"]["calls"] > 0 and concurrent["usage"]["report_judge"]["calls"] > 0
    assert total["made"] == server.stats.requests and total["calls"] == serial["usage"]["total"]["calls"]
    assert total["cost_usd"] > 0 and total["cost"].startswith("$")
    # the same experiment again on the same cache: no request, nothing billed, the same decisions
    assert again_server.stats.requests == 0
    assert _what_it_decided(again, again_log) == decided
    cached = again["usage"]["total"]
    assert cached["made"] == 0 and cached["cached"] == cached["calls"] == total["calls"]
    assert cached["input_tokens"] == 0 and cached["cost_usd"] == 0.0
    # the estimate (a dry pass with SimLM, priced as gpt-4.1-mini) against the real run without a cache; stated
    # tolerances: calls 5 %, tokens and dollars 15 %
    real = serial["usage"]["total"]
    assert real["cached"] == 0
    guess = estimate["meters"]["total"]
    assert guess["calls"] == pytest.approx(real["calls"], rel=0.05)
    assert guess["input_tokens"] == pytest.approx(real["input_tokens"], rel=0.15)
    assert guess["cost_usd"] == pytest.approx(real["cost_usd"], rel=0.15)


def test_run_counts_prices_and_caches_every_call(tmp_path):
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.lm.costs import price

    small = "synthetic:conversations=2,sessions=2,seed=3,questions_per_conversation=5"
    with SimServer() as server:
        spec = f"{PRICED}@{server.url}"
        first = run_pipeline("rag", small, lm=spec, judge_lm=spec, cache=True)
        requests = server.stats.requests
        again = run_pipeline("rag", small, lm=spec, judge_lm=spec, cache=True)
        unknown = run_pipeline("rag", small, lm=f"openai/sim@{server.url}", judge_lm=None, cache=False)
        serial = run_pipeline("rag", small, lm=spec, judge_lm=spec, cache=False, concurrency=1)
    assert [(c.prediction, c.correct) for c in serial.cases] == [(c.prediction, c.correct) for c in first.cases]
    assert serial.metrics == first.metrics  # 8 calls of each role in flight (the default) or one at a time
    task = first.usage["task"]
    assert task["calls"] == task["made"] > 0 and task["cached"] == 0
    assert first.usage["task"]["made"] + first.usage["judge"]["made"] == requests
    expected = price(parse_lm_spec(PRICED), task["input_tokens"], task["output_tokens"])
    assert task["cost_usd"] == pytest.approx(expected, abs=1e-5)
    assert server.stats.requests == requests + unknown.usage["task"]["made"] + serial.usage["task"]["made"] + \
        serial.usage["judge"]["made"]  # the repeated run asked nothing
    assert again.usage["task"]["cached"] == task["calls"] and again.usage["task"]["cost_usd"] == 0.0
    assert [c.prediction for c in again.cases] == [c.prediction for c in first.cases]
    assert unknown.usage["task"]["cost"] == "unknown" and unknown.usage["task"]["cost_usd"] is None


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_max_cost_stops_cleanly_after_the_last_completed_round(tmp_path):
    from memopt.optimize.loop import STATE_ARTIFACT, make_scorer

    with SimServer() as server:
        probe, _, _ = _optimize(_experiment(server.url, concurrency=4, **{"lm.cache": False}), tmp_path / "probe")
        one_round = probe["usage"]["total"]["cost_usd"]  # round 0 (the starting prompts) and round 1
        experiment = _experiment(server.url, concurrency=4, rounds=3, **{"budget.max_cost_usd": one_round * 1.01,
                                                                         "lm.cache": False})
        summary, recorder, _ = _optimize(experiment, tmp_path / "run")
    assert summary["status"] == "FINISHED" and "max-cost" in summary["stopped"]
    assert summary["usage"]["total"]["cost_usd"] >= one_round * 1.01 and len(summary["rounds"]) == 1
    state = json.loads(recorder.files[STATE_ARTIFACT])
    assert state["next_round"] == 2 and len(state["records"]) == 2  # round 2 was dropped; the state has round 1
    with pytest.raises(ConfigError, match="no price for lm.task 'openai/sim@"):
        make_scorer(_experiment("http://127.0.0.1:9/v1", model="openai/sim", **{"budget.max_cost_usd": 1.0}))


def test_judge_accuracy_counts_errored_cases_as_failures():
    ok = CaseResult("c:q1", "c", 4, "q", "a", "a", 1.0, 1.0, True)
    wrong = CaseResult("c:q2", "c", 4, "q", "a", "b", 0.0, 0.0, False)
    no_verdict = CaseResult("c:q3", "c", 4, "q", "a", "a", 1.0, 1.0, None, "judge: LMError: 429")
    no_answer = CaseResult("c:q4", "c", 4, "q", "a", "", 0.0, 0.0, None, "ingest: LMError: timeout")
    metrics = case_metrics([ok, wrong, no_verdict, no_answer], judged=True)
    assert metrics["judge"] == 0.25 and metrics["errored"] == 2 and metrics["f1"] == 0.5
    assert case_metrics([ok, wrong], judged=False)["judge"] == 0.5  # the recorded verdicts, when not judging


def test_lm_slots_bound_the_calls_in_flight_per_role():
    import dspy

    from memopt.core.parallel import map_ordered
    from memopt.lm.pool import LMSlots, default_concurrency, role_concurrency
    from memopt.simlm import SimEngine

    slots = LMSlots(3)
    lm = dspy.LM("sim/memopt", engine=SimEngine(latency=0.05), cache=False, callbacks=[slots])
    predict = dspy.Predict("question -> answer")  # built once, before the threads, as the systems build theirs
    with dspy.context(lm=lm):
        map_ordered(lambda i: predict(question=f"q{i}"), range(12), workers=8)
    assert slots.peak == 3
    sim, api = parse_lm_specs("sim"), parse_lm_specs("openai/x")
    assert default_concurrency(parse_lm_spec("sim")) == 1
    assert default_concurrency(parse_lm_spec("openai/x@http://h:1/v1")) == 8
    assert role_concurrency({"judge": 2}, {"task": api, "judge": api}) == {"task": 8, "judge": 2}
    assert role_concurrency(5, {"task": sim, "judge": sim}) == {"task": 5, "judge": 5}
    with pytest.raises(ConfigError, match="lm.concurrency: unknown role"):
        role_concurrency({"tsak": 2}, {"task": sim})
    with pytest.raises(ConfigError, match="from 1 to"):
        role_concurrency(0, {"task": sim})


def test_identical_cached_requests_in_flight_cost_one_request():
    import dspy

    from memopt.core.parallel import map_ordered
    from memopt.lm.build import ask, make_lm
    from memopt.lm.pool import LMSlots
    from memopt.lm.usage import UsageMeter
    from memopt.simlm.server import SimServer

    questions = ["Who adopted Max?"] * 4 + ["Where does Ana work?"] * 4
    # Built once, before the threads: parsing a string signature in eight threads at once can raise CPython
    # 3.11's "AST constructor recursion depth mismatch" (seen in CI), and no system builds modules per call.
    predict = dspy.Predict("question -> answer")
    with SimServer(delay=0.3) as server:
        meter = UsageMeter()
        lm = make_lm(f"openai/sim@{server.url}", cache=True, callbacks=[LMSlots(8), meter])
        with dspy.context(lm=lm):
            answers = map_ordered(lambda q: ask(predict, question=q).answer, questions,
                                  workers=8)
        twice = server.stats.requests
        uncached = make_lm(f"openai/sim@{server.url}", cache=False, callbacks=[LMSlots(8)])
        with dspy.context(lm=uncached):
            map_ordered(lambda q: ask(predict, question=q), questions, workers=8)
    assert twice == 2  # eight calls at once, two distinct prompts: one request each, the rest wait and hit the cache
    assert answers[:4] == [answers[0]] * 4 and answers[4:] == [answers[4]] * 4
    usage = meter.total()
    assert (usage.calls, usage.cached) == (8, 6)
    assert server.stats.requests - twice == 8  # without the cache nothing waits: every call is its own request


def test_progress_line_shows_phase_cases_and_rate_on_a_tty_and_nothing_otherwise():
    from rich.console import Console

    from memopt.core.progress import RoundProgress
    from memopt.lm.usage import ModelUsage

    def run(console: Console) -> RoundProgress:
        before = threading.active_count()
        with RoundProgress(console, lambda: ModelUsage(calls=40, cached=10), lambda u: "$0 (simulated)") as progress:
            progress.phase("round 1/3 · train", 10)
            for _ in range(4):
                progress.advance()
            progress.grow(2)  # a phase started with a total keeps it
            progress.enabled and progress._bar.refresh()
            progress.round_done(1, 2)
            progress.phase("round 1/3 · trials 1–4 of 8", 0)
            progress.grow(12)  # one started without grows
            progress.advance(3)
            progress.enabled and progress._bar.refresh()
            progress.threads = threading.active_count() - before
        return progress

    tty = io.StringIO()
    shown = run(Console(file=tty, force_terminal=True, width=200))
    out = tty.getvalue()
    assert "round 1/3 · train" in out and "4/10" in out and "4/12" not in out and "calls/s" in out
    assert "trials 1–4 of 8" in out and "3/12" in out and "elapsed " in out and "ETA ~" in out
    assert "30 calls made" in out and shown.threads == 1  # rich's refresh thread
    pipe = io.StringIO()
    quiet = run(Console(file=pipe, force_terminal=False))
    assert pipe.getvalue() == "" and not quiet.enabled and quiet.threads == 0
