"""A round's evaluated cases as MLflow traces, with attributions and judge verdicts as assessments on them.

Contract:

- **What is traced.** After a round's train evaluation and attribution, `CaseTraces.log` picks cases
  by the experiment's ``mlflow.traces``: ``failed`` — wrong answers with an attribution, taken in turn
  from each (error type, blamed op) group so rare failures are not crowded out, then wrong answers
  without one, then errored cases; ``sample`` (default) — the same plus a seeded sample of passing
  cases (a tenth of the cap, at least one); ``all`` — every case, failed first; ``none`` — nothing.
  At most ``mlflow.max_traces`` per round (default `MAX_TRACES`). One trace per case per round that
  ran it: a round that reused the last train run (``outcome.reused_train``) logs none. Rounds without
  a train evaluation (round 0, ``gepa``) log none; rounds evaluated untraced (``score_only``) log root
  spans only.
- **Spans** come from memopt's evolution graph after the round (`memopt.tracking.spans`: the
  case, the ingest ops it depends on grouped by session, its query ops; inputs, outputs, timing,
  token usage, prompt versions), never from live instrumentation, so nothing is recorded twice.
- **Assessments**, written with the trace: ``memtrace.attribution`` (feedback; value = error type,
  rationale = why in plain words (`memopt.trace.explain.plain_reason`: the blamed step, the evidence
  quoted, what the step produced instead), metadata ``op_id``, ``operation``, ``method``,
  ``verified``, ``confidence``, ``judge_calls``, ``evidence_path``, ``reason`` (the method's own);
  attached to the blamed op's span when the trace has it, so the UI shows it on that span),
  ``traced_case.judge`` (feedback from the judge LM), ``traced_case.f1`` (feedback, LoCoMo F1) and
  ``expected_response`` (expectation: the gold answer). The ``traced_case.`` names say that these
  score a pick of mostly failed cases, not the run; the experiment's description says so too.
- **Linking.** Trace metadata ``mlflow.sourceRun`` is the round's run, so
  ``mlflow.search_traces(run_id=...)`` and the run's Traces tab find them. Tags: ``memopt.case_id``,
  ``memopt.case`` (question key), ``memopt.round``, ``memopt.outcome`` (failed / passed / error),
  ``memtrace.blamed_op`` (the blamed operation, e.g. ``update``) and ``memtrace.error_type`` (``none`` for a
  passed case, ``unattributed`` for a failure without attribution, ``error`` for an errored case),
  ``memopt.graph`` (the round artifact ``graphs/<sample_id>.json.gz`` holding the conversation's
  graph, read back by `case_graph_of_trace` for ``memopt show --trace-id``), ``memopt.kind = case``,
  and ``mlflow.linkedPrompts``; each trace is also linked to its prompt versions in the store
  (``link_prompt_versions_to_trace``), so a prompt version's Traces tab lists the cases that ran it.
  A failure also carries ``memopt.prompt_after`` (the version its round produced for the blamed step)
  and, without an attribution, ``memopt.unattributed`` (why, from ``outcome.unattributed``). The
  recorder logs `RoundTraces.metrics` (``traces.logged``, ``traces.spans``, ``traces.seconds``) after
  the round's scores; ``round.md``'s links start at the tracking server, else are relative to the UI.
- **Cost.** Traces go through MLflow's store API in bulk — one ``start_trace`` per trace carrying its
  assessments, one ``log_spans`` for all spans of the round — not through the live tracing provider,
  which writes every span and every assessment in a store call of its own. Every text is redacted
  like the rest of what memopt logs.
- Tracing never breaks a round: a failure is logged as a warning, tagged on the round's run
  (``memopt.traces_error``) and said in ``round.md``.
"""

from __future__ import annotations

import gzip
import json
import logging
import random
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx

from memopt.core.errors import ConfigError
from memopt.lm.redaction import redact
from memopt.optimize.story import TRACED_NOTE
from memopt.trace.explain import plain_reason
from memopt.tracking.spans import MAX_TEXT, GraphIndex, case_spans
from memopt.tracking.views import ui_base

__all__ = ["TRACE_MODES", "MAX_TRACES", "ATTRIBUTION", "JUDGE", "F1", "BLAMED_OP", "ERROR_TYPE", "TRACED_NOTE",
           "PROMPT_AFTER", "UNATTRIBUTED", "outcome_why",
           "CaseTraces", "RoundTraces", "pick_cases",
           "CaseGraph", "case_graph_of_trace"]

TRACE_MODES = ("failed", "sample", "all", "none")
MAX_TRACES = 12  # the default of the experiment's mlflow.max_traces
ATTRIBUTION, JUDGE, F1, EXPECTED = "memtrace.attribution", "traced_case.judge", "traced_case.f1", "expected_response"
BLAMED_OP, ERROR_TYPE = "memtrace.blamed_op", "memtrace.error_type"
PROMPT_AFTER, UNATTRIBUTED = "memopt.prompt_after", "memopt.unattributed"
_log = logging.getLogger(__name__)


def _passed(result: Any) -> bool:
    """A case passed when the judge accepted it, else (not judged) when its F1 is at least 0.5."""
    return bool(result.correct) if result.correct is not None else result.f1 >= 0.5


def pick_cases(results: list[Any], blamed: dict[str, Any], *, mode: str, limit: int, seed: int) -> list[Any]:
    """The cases of a round to trace: attributed failures round-robin over (error type, op), then failures without
    an attribution, errored cases, and a passing sample."""
    if mode == "none":
        return []
    groups: dict[tuple[str, str], list[Any]] = {}
    for r in results:
        if not r.error and not _passed(r) and (a := blamed.get(r.case_id)) is not None:
            groups.setdefault((a.error_type, a.operation), []).append(r)
    failed = [r for batch in _interleave(list(groups.values())) for r in batch]
    failed += [r for r in results if not r.error and not _passed(r) and r.case_id not in blamed]
    failed += [r for r in results if r.error]
    passed = [r for r in results if not r.error and _passed(r)]
    if mode == "failed":
        return failed[:limit]
    if mode == "all":
        return (failed + passed)[:limit]
    k = min(len(passed), max(1, limit // 10), limit - 1)
    sample = random.Random(seed).sample(range(len(passed)), k)
    return failed[: limit - k] + [passed[i] for i in sorted(sample)]


def _interleave(groups: list[list[Any]]) -> Iterable[list[Any]]:
    """One item of every group in turn (singletons), until all are used."""
    for i in range(max(map(len, groups), default=0)):
        yield [g[i] for g in groups if i < len(g)]


def _assessments(result: Any, attribution: Any, judge: str, blamed_span: str | None, G: Any = None) -> list[Any]:
    from mlflow.entities import AssessmentSource, Expectation, Feedback

    code = AssessmentSource(source_type="CODE", source_id="memopt")
    out = [Expectation(name=EXPECTED, value=redact(result.gold), source=code),
           Feedback(name=F1, value=float(result.f1), source=AssessmentSource(source_type="CODE",
                                                                             source_id="memopt.judge.metrics.locomo_f1"))]
    if result.correct is not None:
        out.append(Feedback(name=JUDGE, value=bool(result.correct), rationale=f"F1 {result.f1:.3f}",
                            source=AssessmentSource(source_type="LLM_JUDGE", source_id=redact(judge))))
    if attribution is not None:
        path = json.dumps(list(attribution.evidence_path), ensure_ascii=False)
        out.append(Feedback(
            name=ATTRIBUTION, value=attribution.error_type,
            rationale=redact(plain_reason(attribution, G, result))[:MAX_TEXT] or None,
            span_id=blamed_span,
            source=AssessmentSource(source_type="CODE", source_id=f"memopt.attribution.{attribution.method}"),
            metadata={"op_id": attribution.op_id, "operation": attribution.operation, "method": attribution.method,
                      "verified": str(attribution.verified).lower(), "confidence": f"{attribution.confidence:.3f}",
                      "judge_calls": str(attribution.judge_calls), "evidence_path": redact(path)[:MAX_TEXT],
                      "reason": redact(attribution.reason)[:MAX_TEXT]}))
    return out


@dataclass
class RoundTraces:
    """What `CaseTraces.log` wrote for one round: per trace (case id, outcome, error type or why it has none, op id,
    trace id, the prompt version its round produced for the blamed op)."""

    run_id: str = ""
    experiment_id: str = ""
    traces: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    spans: int = 0
    seconds: float = 0.0
    evaluated: int = 0
    mode: str = "none"
    error: str | None = None
    ran_in: int | None = None  # the round that ran (and traced) this round's train cases, when it is an earlier one

    def metrics(self) -> dict[str, Any]:
        """The round's ``traces.*`` metrics (logged after its scores: bookkeeping comes last)."""
        return {"traces": {"logged": len(self.traces), "spans": self.spans, "seconds": self.seconds}}

    def markdown(self, tracking_uri: str) -> str:
        """The ``## Traces`` section of ``round.md``: how to find the traces, and a link per trace (links start at
        the tracking server's address, or are relative to the MLflow UI's when the store is a database)."""
        if not self.traces:
            if self.ran_in is not None:
                why = (f"its train cases were not run again: round {self.ran_in} ran them with the same prompts and "
                       f"knobs, and its traces hold them")
            else:
                why = f"tracing failed: {self.error}" if self.error else \
                    f"mlflow.traces: {self.mode}, or no traced cases"
            return f"## Traces\n\nNo traces for this round ({why}).\n"
        base = ui_base(tracking_uri)
        where = "" if base else " (links are relative to the MLflow UI's address)"
        lines = ["## Traces", "",
                 f"{len(self.traces)} of {self.evaluated} train cases logged as MLflow traces on this round's run "
                 f"(`mlflow.traces: {self.mode}`); in the UI: the run → **Traces** tab, or the experiment's "
                 f"[Traces page]({base}#/experiments/{self.experiment_id}/traces){where}. From Python:", "",
                 "```python", f'mlflow.search_traces(locations=["{self.experiment_id}"], run_id="{self.run_id}", '
                 f"filter_string=\"feedback.`{ATTRIBUTION}` = 'UpdateError'\")", "```", "",
                 "| case | outcome | error type | blamed op | prompt after the round | trace |",
                 "|---|---|---|---|---|---|"]
        for case_id, outcome, error_type, op_id, trace_id, after in self.traces:
            url = f"{base}#/experiments/{self.experiment_id}/traces?selectedEvaluationId={trace_id}"
            prompts = ", ".join(_prompt_link(uri, base) for uri in after.split(", ") if uri) or "—"
            lines.append(f"| {case_id} | {outcome} | {error_type or '—'} | {op_id or '—'} | {prompts} | "
                         f"[{trace_id}]({url}) |")
        return "\n".join([*lines, ""])


def _prompt_link(uri: str, base: str) -> str:
    """``prompts:/<name>/<version>`` as a Markdown link to the version on the prompt's page."""
    name, _, version = uri.removeprefix("prompts:/").rpartition("/")
    return f"[{name} v{version}]({base}#/prompts/{name}?promptVersion={version})"


@dataclass
class CaseTraces:
    """How a round's cases become MLflow traces (the experiment's ``mlflow.traces`` / ``max_traces``)."""

    mode: str = "sample"
    limit: int = MAX_TRACES
    judge: str = "sim"
    seed: int = 0
    ran_in: int | None = None  # the last round that ran (and traced) the train split

    @classmethod
    def of(cls, experiment: Any) -> CaseTraces:
        """How an experiment's rounds log their cases (``mlflow.traces``, ``mlflow.max_traces``, its judge, seed)."""
        return cls(experiment.mlflow.traces, experiment.mlflow.max_traces,
                   " + ".join(spec.raw for spec in experiment.lm.judge), experiment.seed)

    def log(self, log: Any, outcome: Any, *, round_index: int, versions: dict[str, int],
            produced: dict[str, list[str]] | None = None) -> RoundTraces:
        """Trace the picked cases of a round on its run (a `RoundLog`; a null tracker, which has no store client,
        gets none), unless the round reused an earlier round's train run (its cases are traced there: one trace
        per case per round that ran it). ``versions``: the prompt versions the round ran with; ``produced``: per
        operation, the ``prompts:/name/version`` it ended with that steer it (``""``: all of them). Never raises
        (a failure is a warning and a run tag)."""
        results = outcome.train.results if outcome is not None else []
        if outcome is not None and getattr(outcome, "reused_train", False):
            return RoundTraces(mode=self.mode, evaluated=len(results),
                               ran_in=self.ran_in if self.ran_in is not None else round_index - 1)
        if self.mode == "none" or not results or not hasattr(log, "_client"):
            return RoundTraces(mode=self.mode, evaluated=len(results))
        self.ran_in = round_index
        started = time.perf_counter()
        try:
            written = self._log(log, outcome, round_index, versions, produced or {})
        except Exception as e:  # noqa: BLE001 — tracing must never end a round
            _log.warning("round %d: MLflow traces not logged: %s", round_index, e)
            log.set_tags({"memopt.traces_error": f"{type(e).__name__}: {e}"})
            return RoundTraces(mode=self.mode, evaluated=len(results), error=f"{type(e).__name__}: {e}")
        written.seconds = time.perf_counter() - started
        return written

    def _log(self, log: Any, outcome: Any, round_index: int, versions: dict[str, int],
             produced: dict[str, list[str]]) -> RoundTraces:
        from mlflow.entities import TraceInfo, TraceLocation, TraceState
        from mlflow.tracing.client import TracingClient

        client = log._client()
        blamed = {case.case_id: (case, a) for case, a in outcome.attributions  # each failure's first fault
                  if not a.masked_by}
        results = outcome.train.results
        picked = pick_cases(results, {k: a for k, (_, a) in blamed.items()}, mode=self.mode, limit=self.limit,
                            seed=self.seed * 1000 + round_index)
        graphs = {r.sample_id: G for r in picked if (G := outcome.train.graphs.get(r.sample_id)) is not None}
        experiment_id = client.get_run(log.run_id).info.experiment_id
        _note_experiment(client, experiment_id)
        artifacts = self._log_graphs(log, graphs)
        indexes = {sample: GraphIndex.of(G) for sample, G in graphs.items()}
        written = RoundTraces(log.run_id, experiment_id, mode=self.mode, evaluated=len(results))
        tracing = TracingClient(client.tracking_uri)
        spans = []
        linked_by_trace: dict[str, list[dict[str, str]]] = {}
        for result in picked:
            case, attribution = blamed.get(result.case_id, (None, None))
            G = graphs.get(result.sample_id)
            trace = case_spans(result, G=G, attribution=attribution, index=indexes.get(result.sample_id),
                               evidence=case.evidence if case is not None else _evidence_of(G, result.case_id),
                               prompts=_prompts_of(versions, G.graph.get("pipeline") if G is not None else None))
            entities = _entities(trace.spans)
            root = entities[0]
            label = "error" if result.error else "passed" if _passed(result) else "failed"
            tags = {"mlflow.traceName": result.case_id, "memopt.kind": "case", "memopt.case_id": result.case_id,
                    "memopt.case": result.case_id.rsplit(":", 1)[-1], "memopt.round": str(round_index),
                    "memopt.outcome": label, BLAMED_OP: attribution.operation if attribution else "none",
                    ERROR_TYPE: attribution.error_type if attribution else
                    ("error" if result.error else "none" if label == "passed" else "unattributed")}
            after = ""
            if label == "failed":
                after = ", ".join(produced.get(attribution.operation if attribution else "", [])
                                  or produced.get("", []))
                if after:
                    tags[PROMPT_AFTER] = after
                if attribution is None:
                    tags[UNATTRIBUTED] = outcome_why(outcome, result.case_id)
            if result.sample_id in artifacts:
                tags["memopt.graph"] = artifacts[result.sample_id]
            if linked := trace.prompts():
                tags["mlflow.linkedPrompts"] = json.dumps(linked)
                linked_by_trace[trace.trace_id] = linked
            tracing.start_trace(TraceInfo(
                trace_id=trace.trace_id, trace_location=TraceLocation.from_experiment_id(experiment_id),
                request_time=root.start_time_ns // 1_000_000, state=TraceState.ERROR if result.error else TraceState.OK,
                request_preview=redact(result.question)[:1000], response_preview=redact(result.prediction)[:1000],
                execution_duration=(root.end_time_ns - root.start_time_ns) // 1_000_000,
                trace_metadata={"mlflow.sourceRun": log.run_id}, tags=tags,
                assessments=_assessments(result, attribution, self.judge, trace.blamed_span, G)))
            spans += entities
            written.traces.append((result.case_id, label, attribution.error_type if attribution else
                                   tags.get(UNATTRIBUTED, ""), attribution.op_id if attribution else "",
                                   trace.trace_id, after))
        tracing.log_spans(experiment_id, spans)
        written.spans = len(spans)
        _link_prompts(client, linked_by_trace)
        return written

    @staticmethod
    def _log_graphs(log: Any, graphs: dict[str, nx.DiGraph]) -> dict[str, str]:
        """Log each graph (redacted, gzip JSON) as ``graphs/<sample_id>.json.gz``; sample id → artifact path."""
        from memopt.trace.io import graph_to_json

        out = {}
        with tempfile.TemporaryDirectory(prefix="memopt-traces-") as tmp:
            for sample, G in graphs.items():
                name = f"{sample.replace('/', '_')}.json.gz"
                text = redact(json.dumps(graph_to_json(G), ensure_ascii=False))
                (Path(tmp) / name).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
                log.log_artifact(Path(tmp) / name, "graphs")
                out[sample] = f"graphs/{name}"
        return out


def outcome_why(outcome: Any, case_id: str) -> str:
    """Why a failure of a round has no attribution (the optimizer says; else: not picked for attribution)."""
    return redact((getattr(outcome, "unattributed", None) or {}).get(case_id, "not attributed this round"))[:MAX_TEXT]


def _link_prompts(client: Any, linked: dict[str, list[dict[str, str]]]) -> None:
    """Link each trace to the prompt versions it ran with in the store too, so a prompt's **Traces** tab lists it."""
    versions: dict[tuple[str, str], Any] = {}
    for trace_id, prompts in linked.items():
        keys = [(p["name"], p["version"]) for p in prompts]
        for key in keys:
            if key not in versions:
                versions[key] = client.get_prompt_version(*key)
        client.link_prompt_versions_to_trace(prompt_versions=[versions[k] for k in keys], trace_id=trace_id)


def _note_experiment(client: Any, experiment_id: str) -> None:
    """Give the experiment a description (unless it has one) saying what its traces' scores are."""
    if "mlflow.note.content" not in client.get_experiment(experiment_id).tags:
        client.set_experiment_tag(experiment_id, "mlflow.note.content", "memopt optimize runs. " + TRACED_NOTE)


def _prompts_of(versions: dict[str, int], pipeline: str | None) -> dict[str, tuple[str, int]]:
    """Registry versions (``{"quickstart.mem0.extract": 2}``, any scope) keyed by operation, for a graph's pipeline."""
    out = {}
    for name, version in versions.items():
        stream, _, op = name.rpartition(".")
        if pipeline and (stream == pipeline or stream.endswith(f".{pipeline}")):
            out[op] = (name, version)
    return out


def _entities(spans: list[dict[str, Any]]) -> list[Any]:
    """MLflow `Span` entities of span dicts, every text redacted (checked once, field by field only when needed)."""
    from mlflow.entities import Span

    blob = json.dumps(spans, ensure_ascii=False)
    if redact(blob) != blob:
        spans = [{**s, "status": {**s["status"], "message": redact(s["status"]["message"])},
                  "attributes": {k: redact(v) for k, v in s["attributes"].items()}} for s in spans]
    return [Span.from_dict(s) for s in spans]


def _evidence_of(G: nx.DiGraph | None, case_id: str) -> tuple[str, ...]:
    """The gold evidence dia_ids a graph recorded for a case."""
    if G is None:
        return ()
    return tuple(next((c.get("evidence") or () for c in G.graph.get("cases", []) if c["case_id"] == case_id), ()))


@dataclass(frozen=True)
class CaseGraph:
    """Where a traced case's graph is, and what to show of it."""

    path: Path
    case: str
    highlight: list[str]
    blamed: str | None
    run_id: str


def case_graph_of_trace(trace_id: str, tracking_uri: str | None, dst: str | Path) -> CaseGraph:
    """Download the graph of a case traced by `CaseTraces` (its round's artifact) into ``dst``."""
    from mlflow.exceptions import MlflowException

    from memopt.tracking.store import URI_ORDER, download_artifacts, load_mlflow, resolve_tracking_uri, store_failure

    uri = resolve_tracking_uri(tracking_uri)
    if uri.startswith("sqlite:///") and not Path(uri.removeprefix("sqlite:///").split("?", 1)[0]).is_file():
        raise ConfigError(f"trace {trace_id!r}: no tracking store at {uri}. The store is chosen by {URI_ORDER}.")
    try:
        trace = load_mlflow().MlflowClient(uri).get_trace(trace_id, display=False)
    except MlflowException as e:
        if e.error_code != "RESOURCE_DOES_NOT_EXIST":
            raise store_failure(uri, f"reading trace {trace_id}", e) from None
        raise ConfigError(f"trace {trace_id!r} not found in the tracking store {uri} ({e.message}). The store is "
                          f"chosen by {URI_ORDER}; pass the URI the optimize run was logged to.") from None
    except Exception as e:  # not a store at all (a file that is no database, a URI MLflow cannot open)
        raise store_failure(uri, f"reading trace {trace_id}", e) from None
    info = trace.info
    graph, run_id = info.tags.get("memopt.graph"), info.trace_metadata.get("mlflow.sourceRun")
    if not graph or not run_id:
        raise ConfigError(f"trace {trace_id!r} has no evolution graph (no memopt.graph tag or source run): only "
                          "traces of `memopt optimize` rounds whose train split was traced (the memtrace optimizer) "
                          "carry one.")
    attribution = next((a for a in info.assessments if a.name == ATTRIBUTION), None)
    meta = attribution.metadata if attribution is not None else {}
    path = download_artifacts(run_id, graph, dst, uri)
    return CaseGraph(path, info.tags.get("memopt.case", ""), json.loads(meta.get("evidence_path") or "[]"),
                     meta.get("op_id"), run_id)
