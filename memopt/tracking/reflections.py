"""Each proposal of a round as an MLflow trace: what the reflection LM was asked, what it answered, what came of it.

GEPA logs the reflection LM's prompt and reply of every proposal; so does memopt. A round's reflections
(`memopt.optimize.propose.Reflection`, one per call of the reflection LM) become one trace each on the round's
run (metadata ``mlflow.sourceRun``), tagged ``memopt.kind = reflection``, ``memopt.round``, ``memopt.op`` and
``memopt.prompt`` (the registry name of the prompt it rewrote). The root span (type CHAT_MODEL) holds the
messages sent and the reply, in the chat format the MLflow UI shows as a conversation; one child span per
candidate it proposed holds the candidate's text and rationale, and whether the prompt check refused it.
Every text passes through `memopt.lm.redaction.redact`. ``round.md`` links each one (`markdown`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from memopt.lm.redaction import redact
from memopt.tracking.spans import CaseSpans
from memopt.tracking.views import ui_base

__all__ = ["REFLECTION", "RoundReflections", "log_reflections"]

REFLECTION = "reflection"  # the ``memopt.kind`` tag of a reflection trace
_log = logging.getLogger(__name__)


@dataclass
class RoundReflections:
    """The reflection traces of one round: (op, prompt name, trace id, candidates) per proposal."""

    experiment_id: str = ""
    traces: list[tuple[str, str, str, int]] = field(default_factory=list)
    error: str | None = None

    def trace_of(self, op: str) -> str:
        """The trace id of the last proposal for ``op`` (``""`` when none)."""
        return next((trace for o, _, trace, _ in reversed(self.traces) if o == op), "")

    def markdown(self, tracking_uri: str) -> str:
        """The ``## Reflections`` section of ``round.md``: one link per proposal."""
        if not self.traces:
            return f"## Reflections\n\nNone logged ({self.error}).\n" if self.error else ""
        base = ui_base(tracking_uri)
        lines = ["## Reflections", "", f"{len(self.traces)} calls of the reflection LM, each an MLflow trace "
                 "(tag `memopt.kind` = `reflection`) holding the prompt it was sent and its reply:", ""]
        for _, name, trace, candidates in self.traces:
            url = f"{base}#/experiments/{self.experiment_id}/traces?selectedEvaluationId={trace}"
            lines.append(f"- {name}: {candidates} candidates, [{trace}]({url})")
        return "\n".join([*lines, ""])


def _spans(reflection: Any, name: str, rejected: list[str]) -> CaseSpans:
    trace = CaseSpans()
    end = reflection.started + reflection.seconds
    messages = [{"role": m.get("role", "user"), "content": redact(str(m.get("content", "")))}
                for m in reflection.messages]
    root = trace.add(f"reflect {name}", "CHAT_MODEL", parent=None, start=reflection.started, end=end,
                     inputs={"messages": messages},
                     outputs={"choices": [{"index": 0, "message": {"role": "assistant",
                                                                    "content": redact(reflection.reply)}}]},
                     attributes={"memopt.op": reflection.op, "memopt.prompt": name, "memopt.lm": reflection.model,
                                 "memopt.lm_calls": reflection.calls})
    for i, proposal in enumerate(reflection.proposals, start=1):
        refused = [why for why in rejected if why.startswith(f"{reflection.op}: ")]
        trace.add(f"candidate {reflection.op} #{i}", "PARSER", parent=root, start=end, end=end,
                  outputs={"prompt": redact(proposal.text), "rationale": redact(proposal.rationale)},
                  attributes={"memopt.candidate": i, "memopt.refused_by_check": bool(refused) or None})
    return trace


def log_reflections(log: Any, outcome: Any, *, round_index: int, names: dict[str, str]) -> RoundReflections:
    """Log each reflection of a round (``outcome.reflections``) as a trace on the round's run; ``names`` maps an op to
    its prompt's registry name. Never raises: a failure is a warning, the run tag ``memopt.reflections_error`` and a
    line in ``round.md``."""
    reflections = list(getattr(outcome, "reflections", None) or [])
    if not reflections or not hasattr(log, "_client"):
        return RoundReflections()
    try:
        return _log_all(log, outcome, reflections, round_index, names)
    except Exception as e:  # noqa: BLE001 — logging what was asked must never end a round
        _log.warning("round %d: reflection traces not logged: %s", round_index, e)
        log.set_tags({"memopt.reflections_error": f"{type(e).__name__}: {e}"})
        return RoundReflections(error=f"{type(e).__name__}: {e}")


def _log_all(log: Any, outcome: Any, reflections: list[Any], round_index: int,
             names: dict[str, str]) -> RoundReflections:
    from mlflow.entities import Span, TraceInfo, TraceLocation, TraceState
    from mlflow.tracing.client import TracingClient

    client = log._client()
    experiment_id = client.get_run(log.run_id).info.experiment_id
    tracing = TracingClient(client.tracking_uri)
    written = RoundReflections(experiment_id)
    spans = []
    for reflection in reflections:
        name = names.get(reflection.op, reflection.op)
        trace = _spans(reflection, name, list(getattr(outcome, "rejected", []) or []))
        entities = [Span.from_dict(s) for s in trace.spans]
        root = entities[0]
        tags = {"mlflow.traceName": f"reflect {name}", "memopt.kind": REFLECTION, "memopt.round": str(round_index),
                "memopt.op": reflection.op, "memopt.prompt": name}
        tracing.start_trace(TraceInfo(
            trace_id=trace.trace_id, trace_location=TraceLocation.from_experiment_id(experiment_id),
            request_time=root.start_time_ns // 1_000_000, state=TraceState.OK,
            request_preview=redact(reflection.operation)[:1000],
            response_preview=f"{len(reflection.proposals)} candidates",
            execution_duration=(root.end_time_ns - root.start_time_ns) // 1_000_000,
            trace_metadata={"mlflow.sourceRun": log.run_id}, tags=tags))
        spans += entities
        written.traces.append((reflection.op, name, trace.trace_id, len(reflection.proposals)))
    tracing.log_spans(experiment_id, spans)
    return written
