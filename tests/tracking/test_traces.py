"""MLflow-native diagnosis: a round's cases as MLflow traces, attributions and judge verdicts as assessments."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest

from memopt.lm.spec import parse_lm_specs
from memopt.tracking.traces import ATTRIBUTION, JUDGE, CaseTraces, pick_cases
from tests.conftest import ROOT

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
CASES = "tags.`memopt.kind` = 'case'"  # a round's case traces (its reflection traces are `reflection`)


@contextmanager
def _tracking(uri: str) -> Iterator[None]:
    """MLflow's process-wide tracking URI (which `Tracker` and `mlflow.search_traces` use) set to ``uri`` in the
    block only: it is also ``$MLFLOW_TRACKING_URI``, which later tests' subprocesses would inherit."""
    from mlflow.tracking._tracking_service.utils import _use_tracking_uri

    with _use_tracking_uri(uri):
        yield


def _search(uri: str, **kwargs) -> list:
    import mlflow

    with _tracking(uri):
        return mlflow.search_traces(return_type="list", **kwargs)


@pytest.fixture(scope="module")
def one_round(tmp_path_factory):
    """A one-round quickstart (the README's main job, ``rounds: 1``) on a fresh store: (dir, uri, round run, exp)."""
    import mlflow

    from memopt.optimize.experiment import load_experiment
    from memopt.optimize.loop import run_experiment

    cwd = tmp_path_factory.mktemp("quickstart1")
    uri = f"sqlite:///{cwd}/mlflow.db"
    with pytest.MonkeyPatch.context() as mp, _tracking(uri):
        mp.chdir(cwd)
        summary = run_experiment(load_experiment(QUICKSTART, {"rounds": 1, "mlflow.tracking_uri": uri,
                                                             "attribution.sample": 100_000}))
    client = mlflow.MlflowClient(uri)
    experiment = client.get_run(summary["run_id"]).info.experiment_id
    [run] = client.search_runs([experiment], filter_string="tags.`memopt.round` = '1'")
    lines = Path(client.download_artifacts(run.info.run_id, "attributions.jsonl", str(cwd))).read_text().splitlines()
    attributions = [json.loads(line) for line in lines]
    behind = [a for a in attributions if a["details"].get("masked_by")]  # answer faults behind the first ones
    assert behind and all(a["error_type"] == "ResponseError" for a in behind)
    firsts = {a["case_id"]: a for a in attributions if a not in behind}
    assert {a["case_id"] for a in behind} <= set(firsts)
    return cwd, uri, run, experiment, firsts


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_round_traces_carry_the_attributions_of_attributions_jsonl(one_round):
    _, uri, run, experiment, attributions = one_round
    traces = _search(uri, run_id=run.info.run_id, locations=[experiment], filter_string=CASES)
    failed = [t for t in traces if t.info.tags["memopt.outcome"] == "failed"]
    passed = [t for t in traces if t.info.tags["memopt.outcome"] == "passed"]
    assert len(traces) == 12 == run.data.metrics["traces.logged"]  # the default cap
    assert len(failed) == 11 and len(passed) == 1 and len(attributions) > 100
    for trace in failed:
        case_id = trace.info.tags["memopt.case_id"]
        [blame] = [a for a in trace.info.assessments if a.name == ATTRIBUTION]
        expected = attributions[case_id]
        assert blame.value == expected["error_type"]
        assert blame.metadata["operation"] == expected["operation"] and blame.metadata["op_id"] == expected["op_id"]
        assert blame.metadata["method"] == "memtrace" and blame.metadata["reason"] == expected["reason"]
        assert blame.rationale.startswith(f"The {expected['operation']} step")
        assert not re.search(r"\b(memory|fact|turn):\S+@\d", blame.rationale), blame.rationale  # no internal ids
        assert trace.info.tags["memtrace.blamed_op"] == expected["operation"]
        assert trace.info.tags["memtrace.error_type"] == expected["error_type"]
        assert [a.value for a in trace.info.assessments if a.name == JUDGE] == [False]
    assert not [a for a in passed[0].info.assessments if a.name == ATTRIBUTION]
    assert [a.value for a in passed[0].info.assessments if a.name == JUDGE] == [True]
    # rare failure types are not crowded out by the 135 extraction errors: one of every (type, op) group
    groups = {(a["error_type"], a["operation"]) for a in attributions.values()}
    blames = [a for t in failed for a in t.info.assessments if a.name == ATTRIBUTION]
    assert {(a.value, a.metadata["operation"]) for a in blames} == groups


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_search_traces_by_assessment_finds_each_error_type(one_round):
    _, uri, run, experiment, attributions = one_round
    traces = _search(uri, run_id=run.info.run_id, locations=[experiment], filter_string=CASES)
    by_type: dict[str, set[str]] = {}
    for t in traces:
        for a in t.info.assessments:
            if a.name == ATTRIBUTION:
                by_type.setdefault(a.value, set()).add(t.info.trace_id)
    assert {"UpdateError", "DeletionError", "ExtractionError", "ResponseError"} <= set(by_type)
    for error_type, ids in by_type.items():
        found = _search(uri, run_id=run.info.run_id, locations=[experiment],
                        filter_string=f"feedback.`{ATTRIBUTION}` = '{error_type}'")
        assert {t.info.trace_id for t in found} == ids
    across = _search(uri, locations=[experiment],
                     filter_string=f"tags.`memopt.round` = '1' AND feedback.`{ATTRIBUTION}` = 'UpdateError'")
    assert {t.info.trace_id for t in across} == by_type["UpdateError"]
    assert _search(uri, locations=[experiment], filter_string=f"tags.`memopt.round` = '2' AND "
                                                              f"feedback.`{ATTRIBUTION}` = 'UpdateError'") == []


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_spans_are_the_cases_ops_with_prompt_versions_usage_and_blame(one_round, tmp_path):
    import mlflow

    from memopt.trace.io import load_graph

    _, uri, run, experiment, attributions = one_round
    [trace, *_] = _search(uri, run_id=run.info.run_id, locations=[experiment],
                          filter_string=f"feedback.`{ATTRIBUTION}` = 'UpdateError'")
    blame = attributions[trace.info.tags["memopt.case_id"]]
    spans = {s.name: s for s in trace.data.spans}
    root = trace.data.spans[0]
    key = blame["case_id"].rsplit(":", 1)[-1]
    assert root.parent_id is None and root.span_type == "CHAIN" and root.inputs["question"]
    assert root.outputs["answer"] == trace.info.response_preview
    query = [s for s in trace.data.spans if s.name.endswith(f":{key}") and s.parent_id == root.span_id]
    assert [(s.name, s.span_type) for s in query] == [(f"retrieve:{key}", "RETRIEVER"), (f"answer:{key}", "LLM")]
    assert spans[f"retrieve:{key}"].outputs[0]["page_content"]
    blamed = [s for s in trace.data.spans if s.attributes.get("memopt.blamed")]
    assert [s.attributes["memopt.op_id"] for s in blamed] == [blame["op_id"]]
    [assessment] = [a for a in trace.info.assessments if a.name == ATTRIBUTION]
    assert assessment.span_id == blamed[0].span_id  # the attribution sits on the blamed op's span
    assert blamed[0].parent_id != root.span_id and spans[f"ingest {blame['op_id'].rsplit(':', 1)[-1]}"]
    client = mlflow.MlflowClient(uri)
    graph = client.download_artifacts(run.info.run_id, trace.info.tags["memopt.graph"], str(tmp_path))
    instructions = load_graph(graph).graph["instructions"]
    llm = [s for s in trace.data.spans if s.span_type == "LLM"]
    assert {s.name.split(":")[0] for s in llm} >= {"update", "answer"}
    for span in llm:
        assert span.attributes["mlflow.chat.tokenUsage"]["input_tokens"] > 0
        [link] = span.attributes["mlflow.linkedPrompts"]
        prompt = client.load_prompt(f"prompts:/{link['name']}/{link['version']}")
        assert prompt.template == instructions[span.name.split(":")[0]].strip()  # the version the round ran with
    assert trace.info.token_usage["input_tokens"] == sum(s.attributes["mlflow.chat.tokenUsage"]["input_tokens"]
                                                         for s in llm)


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_round_md_links_every_trace(one_round):
    import mlflow

    cwd, uri, run, experiment, _ = one_round
    text = Path(mlflow.MlflowClient(uri).download_artifacts(run.info.run_id, "round.md", str(cwd / "md"))).read_text()
    section = text.split("## Traces", 1)[1]
    for trace in _search(uri, run_id=run.info.run_id, locations=[experiment], filter_string=CASES):
        assert f"selectedEvaluationId={trace.info.trace_id})" in section
    # a sqlite store has no server: links are relative to the MLflow UI's address, whatever its port
    assert f"(#/experiments/{experiment}/traces" in section and run.info.run_id in section
    assert "127.0.0.1:5000" not in text


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_show_opens_the_case_graph_of_a_trace(one_round, tmp_path):
    from typer.testing import CliRunner

    from memopt.cli import app
    from memopt.cli.show import show
    from memopt.core.errors import ConfigError
    from memopt.tracking.traces import case_graph_of_trace

    cwd, uri, run, experiment, _ = one_round
    [trace, *_] = _search(uri, run_id=run.info.run_id, locations=[experiment],
                          filter_string=f"feedback.`{ATTRIBUTION}` = 'DeletionError'")
    blamed = next(a for a in trace.info.assessments if a.name == ATTRIBUTION).metadata["op_id"]
    out = tmp_path / "case.html"
    args = ["show", "--trace-id", trace.info.trace_id, "--tracking-uri", uri, "--out", str(out)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "case view" in done.output and blamed in out.read_text()
    with pytest.raises(ConfigError, match="trace 'tr-0123' not found in the tracking store"):
        case_graph_of_trace("tr-0123", uri, tmp_path)
    with pytest.raises(ConfigError, match="no tracking store"):
        case_graph_of_trace(trace.info.trace_id, f"sqlite:///{tmp_path}/nowhere.db", tmp_path)
    with pytest.raises(ConfigError, match="either a GRAPH.json or --trace-id"):
        show(graph=None, case=None, path=None, blamed=None, trace_id=None, tracking_uri=None, out=out, png=None)


@pytest.fixture(scope="module")
def small_round():
    """A real traced, judged and attributed train evaluation (mem0, SimLM), as a round outcome carries it."""
    from memopt.attribution.case import failed_cases
    from memopt.attribution.methods import attribute
    from memopt.data.source import load_data
    from memopt.optimize.scoring import Scorer
    from memopt.systems import make_system

    _, conversations = load_data("synthetic:conversations=2,sessions=4,seed=3")
    scorer = Scorer(*[parse_lm_specs("sim")] * 3, budget=10**6)
    system = make_system("mem0")
    train = scorer.score(system, conversations, judged=True, traced=True)
    by_id = {r.case_id: r.to_dict() for r in train.results}
    blamed = [(case, attribute(case, scorer.judge, "memtrace")) for G in train.graphs.values()
              for case in failed_cases(G, by_id)]
    return system, SimpleNamespace(train=train, attributions=blamed)


def test_pick_cases_modes_caps_and_spread(small_round):
    _, outcome = small_round
    results = outcome.train.results
    blamed = {case.case_id: a for case, a in outcome.attributions}
    failed = {r.case_id for r in results if r.case_id in blamed}
    assert pick_cases(results, blamed, mode="none", limit=50, seed=0) == []
    only_failed = pick_cases(results, blamed, mode="failed", limit=5, seed=0)
    assert len(only_failed) == 5 and {r.case_id for r in only_failed} <= failed
    groups = {(a.error_type, a.operation) for a in blamed.values()}
    spread = {(blamed[r.case_id].error_type, blamed[r.case_id].operation) for r in only_failed}
    assert len(spread) == min(5, len(groups))
    sample = pick_cases(results, blamed, mode="sample", limit=10, seed=0)
    assert len(sample) == 10 and len([r for r in sample if r.case_id not in failed]) == 1
    assert sample == pick_cases(results, blamed, mode="sample", limit=10, seed=0)
    everything = pick_cases(results, blamed, mode="all", limit=len(results), seed=0)
    assert sorted(r.case_id for r in everything) == sorted(r.case_id for r in results)
    assert {r.case_id for r in everything[: len(failed)]} == failed


def test_trace_settings_are_validated_and_a_case_without_graph_is_its_root_span(small_round, tmp_path):
    from memopt.core.errors import ConfigError
    from memopt.optimize.experiment import load_experiment
    from memopt.tracking.spans import case_spans

    assert load_experiment(QUICKSTART).mlflow.traces == "sample"
    with pytest.raises(ConfigError, match="mlflow.traces"):
        load_experiment(QUICKSTART, {"mlflow.traces": "some"})
    with pytest.raises(ConfigError, match="mlflow.max_traces"):
        load_experiment(QUICKSTART, {"mlflow.max_traces": 0})
    result = small_round[1].train.results[0]
    [root] = case_spans(result, G=None).spans
    assert root["name"] == result.case_id and json.loads(root["attributes"]["mlflow.spanType"]) == "CHAIN"


def test_case_ops_are_the_evidence_sessions_and_the_case_query(small_round):
    from memopt.tracking.spans import case_ops

    _, outcome = small_round
    case, attribution = next((c, a) for c, a in outcome.attributions if c.evidence_turns)
    ingest, query = case_ops(case.G, case.key, case.evidence, [attribution.op_id])
    sessions = {t.split(":")[1][1:] for t in case.evidence_turns}  # turn:D3:5@1 -> 3
    assert all(op.rsplit(":", 1)[-1] == case.key for op in query) and query[-1].startswith("answer:")
    assert {op for op in ingest if op.startswith("extract:")} >= {f"extract:{case.G.graph['conversation']}:S{s}"
                                                                 for s in sessions}
    assert attribution.op_id in ingest + query
    keys = {c["key"] for c in case.G.graph["cases"]}
    assert not [op for op in ingest if op.rsplit(":", 1)[-1] in keys]


@pytest.mark.slow  # a full optimization (CI runs it with -m slow)
def test_none_logs_nothing_and_a_failure_never_ends_the_round(small_round, one_round, monkeypatch):
    from mlflow.exceptions import MlflowException
    from mlflow.tracing.client import TracingClient

    from memopt.tracking import Tracker

    system, outcome = small_round
    cwd, uri, *_ = one_round  # an existing store (a new one costs seconds of schema migrations); a new experiment
    monkeypatch.chdir(cwd)
    tracker = Tracker(uri, "traces-test")
    with _tracking(uri):
        tracker.start("t", {})
        with tracker.round(1) as log:
            versions = log.register_prompts(system.name, system.instructions(), commit_message="seed", round_index=0)
            assert CaseTraces("none").log(log, outcome, round_index=1, versions=versions).traces == []
            written = CaseTraces("failed", 3).log(log, outcome, round_index=1, versions=versions)

            def refuse(*args, **kwargs):
                raise MlflowException("store refused the trace")

            monkeypatch.setattr(TracingClient, "start_trace", refuse)
            broken = CaseTraces("failed", 3).log(log, outcome, round_index=1, versions=versions)
    assert len(written.traces) == 3 and broken.traces == [] and "store refused" in broken.error
    assert "tracing failed" in broken.markdown(uri)
    client = tracker._client()
    assert "store refused" in client.get_run(log.run_id).data.tags["memopt.traces_error"]
    found = _search(uri, run_id=log.run_id, locations=[client.get_run(log.run_id).info.experiment_id])
    assert sorted(t.info.trace_id for t in found) == sorted(t[4] for t in written.traces)
    assert all(len(t.data.spans) >= 3 for t in found)
