"""LM faults never end an experiment unless too many cases error: 429s and malformed replies from `memopt serve`,
a server that never answers in time, an LM that is down; several endpoints for one role."""

from __future__ import annotations

import json
import re

import pytest

from memopt.bench.latency import served
from memopt.core.errors import EvaluationFailed, LMError
from memopt.simlm.server import SimServer
from tests.lm.test_practice import TINY, _experiment


def _statuses(uri: str, run_id: str) -> dict[str, str]:
    import mlflow

    client = mlflow.MlflowClient(uri)
    parent = client.get_run(run_id)
    rounds = client.search_runs([parent.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run_id}'")
    return {"parent": parent.info.status, **{r.data.tags["memopt.round"]: r.info.status for r in rounds}}


@pytest.mark.slow
@pytest.mark.parametrize("fault", [("--fail-rate", "0.3", "--status", "429"), ("--malformed-rate", "0.3")],
                         ids=["429", "malformed"])
def test_optimize_finishes_against_faults_and_reports_errored_cases(tmp_path, fault):
    from memopt.cli.tables import rounds_table
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import Tracker

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    with served(extra=fault) as server:
        # one request at a time, so the seeded faults fall on the same requests every time; fewer retries than the
        # defaults (3 and 2 parse retries), so that some cases do error; no error limit (one failed ingestion errors
        # a whole split of this small data set; the limit is tested below)
        experiment = _experiment(server.url, model="openai/sim", concurrency=1,
                                 **{"lm.cache": False, "lm.num_retries": 2, "lm.parse_retries": 0,
                                    "max_error_rate": 1.0})
        summary = run_experiment(experiment, tracker=Tracker(uri, "faults"))
    assert summary["status"] == "FINISHED" and summary["stopped"] is None, summary["stopped"]
    assert len(summary["rounds"]) == 1
    assert _statuses(uri, summary["run_id"]) == {"parent": "FINISHED", "0": "FINISHED", "1": "FINISHED"}
    usage = summary["usage"]["total"]
    if "429" in fault:
        assert server.injected_failures > 0 and server.requests > usage["made"]  # 429s retried within a call
    else:
        assert server.malformed > 0 and usage["made"] == server.requests  # each new ask is a call of its own
    errored = [summary["baseline"]["errored"], summary["rounds"][0]["errored"]]
    assert all(set(e) >= {"val", "test"} for e in errored) and set(errored[1]) >= {"train"}
    assert sum(sum(e.values()) for e in errored) > 0
    from rich.console import Console

    console = Console(record=True, width=200)
    console.print(rounds_table(summary))
    row = next(line for line in console.export_text().splitlines() if re.match(r"^│\s+1\s+│", line))
    e = errored[1]
    assert f"{e['train']}/{e['val']}/{e['test']}" in row


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_an_lm_that_is_down_fails_round_zero_with_one_message_and_no_run_left_running(tmp_path):
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import Tracker

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    with SimServer(fail_rate=1.0, status=500) as down:
        with pytest.raises(EvaluationFailed,
                           match=r"round 0/\d+: val report: \d+ of \d+ cases errored \(more than 20%\)"):
            run_experiment(_experiment(down.url, model="openai/sim", **{"lm.num_retries": 0, "lm.cache": False}),
                           tracker=Tracker(uri, "g"))
    assert _experiment_statuses(uri, "g") == ["FAILED", "FAILED"]  # the parent run and round 0


@pytest.mark.slow
def test_too_many_errored_cases_in_a_round_fail_it_and_keep_the_last_completed_round(tmp_path):
    from memopt.optimize.loop import run_experiment
    from memopt.tracking import Tracker

    uri = f"sqlite:///{tmp_path}/mlflow.db"
    with SimServer() as good:
        first = run_experiment(_experiment(good.url, model="openai/sim", concurrency=4), tracker=Tracker(uri, "f"))
    assert first["status"] == "FINISHED"
    with SimServer(fail_rate=1.0, status=500) as down:
        # resumed with LMs that are down: round 2's training evaluation errors on every case
        broken = _experiment(down.url, model="openai/sim", concurrency=4, rounds=2,
                             **{"lm.num_retries": 0, "lm.cache": False})
        summary = run_experiment(broken, resume=first["run_id"], tracker=Tracker(uri, "f"))
    assert summary["status"] == "FAILED" and re.search(r"round 2/\d+: train:", summary["stopped"])
    assert "cases errored (more than 20%)" in summary["stopped"] and "lm.timeout" in summary["stopped"]
    assert _statuses(uri, first["run_id"]) == {"parent": "FAILED", "0": "FINISHED", "1": "FINISHED", "2": "FAILED"}
    assert [r["round"] for r in summary["rounds"]] == [1]
    with SimServer(fail_rate=1.0, status=500) as down, SimServer() as good:
        reflection_down = _experiment(good.url, model="openai/sim", concurrency=4,
                                      **{"lm.reflection": f"openai/sim@{down.url}", "lm.num_retries": 0,
                                         "lm.cache": False})
        with pytest.raises(LMError, match=r"LM 'openai/sim@http://127\.0\.0\.1:\d+/v1' failed with a server error"):
            run_experiment(reflection_down, tracker=Tracker(uri, "h"))
    assert sorted(_experiment_statuses(uri, "h")) == ["FAILED", "FAILED", "FINISHED"]  # parent, round 1; round 0


def _experiment_statuses(uri: str, name: str) -> list[str]:
    import mlflow

    client = mlflow.MlflowClient(uri)
    return [r.info.status for r in client.search_runs([client.get_experiment_by_name(name).experiment_id])]


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_a_server_that_never_answers_in_time_fails_its_cases_not_the_run():
    from memopt.evaluate.pipeline import run_pipeline

    with SimServer(delay=3.0) as slow:
        result = run_pipeline("long_context", TINY, lm=f"openai/sim@{slow.url}", judge_lm=None, limit=3,
                              timeout=0.3, num_retries=1, concurrency=3)
    # every call gave up after its timeout: had one waited the server's 3 s out, its case would have an answer
    assert result.metrics["errored"] == 3 and all("Timeout" in c.error for c in result.cases)


@pytest.mark.slow  # over 4 s (CI runs it with -m slow)
def test_unparseable_replies_are_asked_again_past_the_cache(tmp_path):
    import dspy
    from dspy.utils.exceptions import AdapterParseError

    from memopt.lm.build import make_lm

    with SimServer(malformed_rate=1.0) as garbled:
        lm = make_lm(f"openai/sim@{garbled.url}", cache=True, parse_retries=2, num_retries=0)
        with dspy.context(lm=lm), pytest.raises(AdapterParseError):
            from memopt.lm.build import ask

            ask(dspy.Predict("question -> answer"), question="Who adopted Max?")
        asked = garbled.stats.requests
        with dspy.context(lm=lm), pytest.raises(AdapterParseError):
            ask(dspy.Predict("question -> answer"), question="Who adopted Max?")
    assert asked == 3 * 2  # three asks, each ChatAdapter then its JSON fallback
    assert garbled.stats.requests == asked  # the second time every reply, garbled or not, came from the cache


def test_a_list_of_endpoints_is_load_balanced_over_both(tmp_path):
    from memopt.evaluate.pipeline import run_pipeline

    with served() as one, served() as two:
        both = run_pipeline("rag", TINY, lm=[f"openai/sim@{one.url}", f"openai/sim@{two.url}"], judge_lm=None,
                            limit=12, concurrency=4)
        alone = run_pipeline("rag", TINY, lm=f"openai/sim@{one.url}", judge_lm=None, limit=12, concurrency=4)
    assert one.requests - alone.usage["task"]["made"] > 0 and two.requests > 0  # both endpoints served the list
    assert one.requests + two.requests == both.usage["task"]["made"] + alone.usage["task"]["made"]
    assert [c.prediction for c in both.cases] == [c.prediction for c in alone.cases]
    assert json.dumps(both.metrics) == json.dumps(alone.metrics)
    assert both.usage["task"]["cost"] == "unknown"  # LiteLLM cannot price 'sim', through the Router or not
    with SimServer() as a, SimServer() as b:
        priced = run_pipeline("rag", TINY, lm=[f"openai/gpt-4.1-mini@{a.url}", f"openai/gpt-4.1-mini@{b.url}"],
                              judge_lm=None, limit=4, concurrency=2)
    assert priced.usage["task"]["cost_usd"] > 0
