"""`lm.engine`: DSPy's own default engine gives the LiteLLM engine's results, counts, prices and retries over
real HTTP (SimLM's server), and the latency bench measures both next to bare `dspy.Predict` anchors."""

from __future__ import annotations

import pytest

from memopt.core.errors import ConfigError
from memopt.simlm.server import SimServer

PRICED = "openai/gpt-4.1-mini"
SMALL = "synthetic:conversations=2,sessions=2,seed=5,questions_per_conversation=4"


def test_dspy_engine_gives_the_litellm_engines_answers_counts_and_costs():
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.systems.base import clear_ingest_cache

    def run(engine: str):
        clear_ingest_cache()  # the same model's ingestion would be reused otherwise
        return run_pipeline("rag", SMALL, lm=spec, judge_lm=spec, engine=engine, concurrency=1)

    with SimServer() as server:
        spec = f"{PRICED}@{server.url}"
        runs = {engine: run(engine) for engine in ("litellm", "dspy")}
        served = server.stats.requests
    litellm, native = runs["litellm"], runs["dspy"]
    assert [c.prediction for c in native.cases] == [c.prediction for c in litellm.cases]
    assert native.metrics == litellm.metrics
    for role in ("task", "judge"):
        assert native.usage[role]["made"] == litellm.usage[role]["made"] > 0
        assert native.usage[role]["cost_usd"] == pytest.approx(litellm.usage[role]["cost_usd"], rel=0.05)
    assert served == sum(run.usage[role]["made"] for run in runs.values() for role in ("task", "judge"))


def test_dspy_engine_replies_from_the_cache_are_counted_and_not_billed(tmp_path):
    from memopt.evaluate.pipeline import run_pipeline
    from memopt.lm.cache import configure_cache
    from memopt.systems.base import clear_ingest_cache

    configure_cache(tmp_path / "cache")
    with SimServer() as server:
        spec = f"{PRICED}@{server.url}"
        first = run_pipeline("rag", SMALL, lm=spec, judge_lm=None, engine="dspy", cache=True)
        asked = server.stats.requests
        clear_ingest_cache()
        again = run_pipeline("rag", SMALL, lm=spec, judge_lm=None, engine="dspy", cache=True)
        assert server.stats.requests == asked  # every reply of the second run came from the cache
    assert first.usage["task"]["made"] == asked > 0
    assert again.usage["task"]["cached"] == again.usage["task"]["calls"] == first.usage["task"]["calls"]
    assert again.usage["task"]["made"] == 0 and again.usage["task"]["cost_usd"] == 0.0
    assert [c.prediction for c in again.cases] == [c.prediction for c in first.cases]


def test_dspy_engine_retries_rate_limits_like_the_litellm_engine():
    from memopt.evaluate.pipeline import run_pipeline

    with SimServer(fail_rate=0.3, status=429, seed=1) as server:
        result = run_pipeline("rag", SMALL, lm=f"{PRICED}@{server.url}", judge_lm=None, engine="dspy",
                              concurrency=1, num_retries=6)
        injected = server.stats.injected_failures
    assert injected > 0
    assert sum(1 for c in result.cases if c.error) == 0


def test_unknown_engine_is_one_clear_error():
    from memopt.lm.build import make_lm

    with pytest.raises(ConfigError, match="lm.engine"):
        make_lm("sim", engine="lm15")


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_latency_bench_reports_anchors_and_each_engine(tmp_path):
    from memopt.bench.latency import bench_latency
    from tests.conftest import ROOT

    tiny = tmp_path / "tiny.yaml"
    tiny.write_text((ROOT / "experiments" / "quickstart.yaml").read_text().replace(
        'source: "synthetic:conversations=12,sessions=8,seed=0"',
        'source: "synthetic:conversations=4,sessions=2,seed=0,questions_per_conversation=4"'))
    report = bench_latency(delay=0.0, concurrency=[2], budget=150, rounds=1, repeat=False, experiment=tiny,
                           engines=["litellm", "dspy"], anchor_calls=5, profile=True)
    floor, rows = report["anchors"], report["runs"]
    serial = [(a["when"], a["engine"], a["cache"]) for a in floor if a["threads"] == 1]
    assert serial == [(when, engine, cache) for when in ("before", "after") for engine in ("litellm", "auto")
                      for cache in (False, True)]
    threaded = [a for a in floor if a["threads"] > 1]
    assert [(a["when"], a["threads"], a["requests"]) for a in threaded] == [("before", 2, 8), ("after", 2, 8)]
    assert all(a["requests"] in (5, 8) and a["cpu_ms_per_request"] > 0 for a in floor)
    assert [r["engine"] for r in rows] == ["litellm", "dspy"]
    assert all(r["vs_anchor"] > 0 and 0 < r["cpu_ms_per_call"] <= r["cpu_ms_per_request"] for r in rows)
    assert rows[0]["requests"] == rows[1]["requests"] > 0
    assert rows[0]["test_f1"] == rows[1]["test_f1"]
    for engine, row in zip(("litellm", "dspy"), rows, strict=True):
        split = report["breakdown"][f"{engine}, concurrency 2"]
        assert split[-1]["cpu_ms_per_request"] == row["cpu_ms_per_request"]
        assert sum(r["cpu_ms_per_request"] for r in split[:-1]) == pytest.approx(row["cpu_ms_per_request"], abs=0.2)
    litellm_share = {r["where"]: r["share"] for r in report["breakdown"]["litellm, concurrency 2"]}
    dspy_share = {r["where"]: r["share"] for r in report["breakdown"]["dspy, concurrency 2"]}
    litellm_own = sum(v for k, v in litellm_share.items() if k.startswith("LiteLLM"))
    assert litellm_own > sum(v for k, v in dspy_share.items() if k.startswith("LiteLLM"))


def test_a_run_is_compared_with_the_mean_of_its_engines_cached_serial_anchor():
    from memopt.bench.latency import versus_anchor

    def anchor(run: str, cpu: float, threads: int = 1) -> dict:
        return {"run": run, "cpu_ms_per_request": cpu, "threads": threads}

    floor = [anchor("dspy.Predict, LiteLLM engine", 3.0), anchor("dspy.Predict, LiteLLM engine, cache", 4.0),
             anchor("dspy.Predict, DSPy default, cache", 1.0), anchor("dspy.Predict, LiteLLM engine, cache", 6.0),
             anchor("dspy.Predict, LiteLLM engine, cache, 16 threads", 50.0, 16)]
    floor.append(anchor("dspy.Predict, LiteLLM engine, cache, 16 threads", 30.0, 16))
    floor.append(anchor("dspy.Predict, LiteLLM engine, cache, 8 threads", 10.0, 8))
    runs = [{"engine": "litellm", "cpu_ms_per_request": 7.5, "concurrency": 16},
            {"engine": "dspy", "cpu_ms_per_request": 2.5, "concurrency": 16},
            {"engine": "litellm", "cpu_ms_per_request": None, "concurrency": 16},
            {"engine": "litellm", "cpu_ms_per_request": 5.0, "concurrency": 4}]
    versus_anchor(runs, floor)
    assert [r["vs_anchor"] for r in runs] == [1.5, 2.5, None, 1.0]
    assert [r["vs_threads"] for r in runs] == [0.19, None, None, None]  # 7.5 / mean(50, 30); none at 4 threads
    versus_anchor(runs, [])
    assert [r["vs_anchor"] for r in runs] == [None, None, None, None]


def test_breakdown_buckets_by_where_the_code_lives():
    from memopt.bench.breakdown import bucket

    assert bucket("/venv/site-packages/litellm/cost_calculator.py") == "LiteLLM: cost calculation"
    assert bucket("/venv/site-packages/litellm/litellm_core_utils/litellm_logging.py").startswith("LiteLLM: logging")
    assert bucket("/venv/site-packages/litellm/main.py") == "LiteLLM: request and response mapping"
    assert bucket("/venv/site-packages/dspy/adapters/chat_adapter.py") == "DSPy adapter: format and parse"
    assert bucket("/repo/memopt/store.py") == "memopt: store and retrieval"
    assert bucket("/repo/memopt/trace/tracer.py") == "memopt: tracing and events"
    assert bucket("/usr/lib/python3.11/threading.py").startswith("Python")


def test_latency_bench_names_a_missing_experiment_before_any_call(tmp_path, monkeypatch, capsys):
    """The anchors' few hundred calls would otherwise run first, and the error come after them."""
    import memopt.bench.latency as latency
    from tests.conftest import run_main

    def no_anchor(**_):
        raise AssertionError("anchors ran before the experiment was read")

    monkeypatch.setattr(latency, "anchors", no_anchor)
    code, _, err = run_main(["bench", "latency", "--experiment", str(tmp_path / "missing.yaml")], tmp_path,
                            monkeypatch, capsys)
    assert code == 2, err
    assert "missing.yaml: no such experiment file" in err
