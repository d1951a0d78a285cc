"""Record a memory system's run as evolution graphs, one per conversation.

``with trace(system) as tracer:`` listens to the events the system emits (`memopt.systems.events`) and to
DSPy's LM callbacks, and builds `tracer.graphs[sample_id]` as described in
`memopt.trace.graph`. Tracing never changes results: the tracer only observes (a failing handler
is logged, never raised), and the ingestion cache is bypassed while it listens so every operation
is seen. Token usage per LLM op comes from DSPy's usage tracking, which `trace` turns on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx

from memopt.data.model import Case
from memopt.systems.events import Event, OpEvent, StoreEvent, VarEvent, current_conversation, listen
from memopt.systems.ops import OpCall
from memopt.trace.graph import SCHEMA_VERSION, split_ref

__all__ = ["Tracer", "trace", "jsonable", "inputs_hash"]

logger = logging.getLogger(__name__)


def jsonable(value: Any) -> Any:
    """A JSON-compatible copy of a value (objects that are not data become ``"<TypeName name>"``)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [jsonable(v) for v in value]
    if hasattr(value, "model_dump"):
        return jsonable(value.model_dump())
    name = getattr(value, "name", None) or getattr(value, "sample_id", None)
    return f"<{type(value).__name__}{' ' + str(name) if name else ''}>"


def inputs_hash(inputs: dict[str, Any]) -> str:
    """Content hash of an operation's (JSON-compatible) inputs: the replay cache key."""
    blob = json.dumps(jsonable(inputs), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


class Tracer:
    """Builds evolution graphs from events (LM calls and tokens per op come from the ops' usage events)."""

    def __init__(self, system: Any = None) -> None:
        self.system = system
        self.graphs: dict[str, nx.DiGraph] = {}
        self._lock = threading.RLock()
        self._clock = 0
        self._op_graph: dict[str, nx.DiGraph] = {}
        self._newest: dict[str, dict[str, str]] = {}  # conversation -> variable name -> newest node

    @property
    def graph(self) -> nx.DiGraph:
        """The graph of the only conversation traced (error when there are none or several)."""
        if len(self.graphs) != 1:
            raise ValueError(f"traced {len(self.graphs)} conversations; use .graphs[sample_id]")
        return next(iter(self.graphs.values()))

    # --- events ---------------------------------------------------------------------------------
    def handle(self, event: Event) -> None:
        """Add one event to the graph of its conversation."""
        conversation = current_conversation()
        if conversation is None:
            return
        with self._lock:
            self._clock += 1
            G = self.graphs[conversation] if conversation in self.graphs else self._new_graph(conversation)
            if isinstance(event, OpEvent):
                self._op(G, event)
            elif isinstance(event, StoreEvent):
                self._store(G, event)
            elif isinstance(event, VarEvent):
                self._var(G, event)

    def _new_graph(self, conversation: str) -> nx.DiGraph:
        import dspy

        from memopt.lm.build import spec_of

        lm = dspy.settings.lm
        model = getattr(lm, "model", None)
        system = self.system
        G = nx.DiGraph(
            schema_version=SCHEMA_VERSION, conversation=conversation, speakers={}, sessions=[], cases=[],
            pipeline=getattr(system, "name", None), knobs=dict(getattr(system, "knobs", {})),
            operations=system.operation_specs() if system is not None else {},
            instructions=system.instructions() if system is not None else {},
            prompt_versions=system.prompt_versions() if system is not None else {},
            lm=spec_of(lm) or ("sim" if model == "sim/memopt" else model),
            simulated=bool(model and model.startswith("sim/")),
            created=time.time(),
        )
        self.graphs[conversation] = G
        self._newest[conversation] = {}
        return G

    def _latest(self, G: nx.DiGraph, name: str) -> str | None:
        return self._newest[G.graph["conversation"]].get(name)

    def _add_var(self, G: nx.DiGraph, name: str, kind: str, value: Any, version: int | None = None,
                 **attrs: Any) -> str:
        previous = self._latest(G, name)
        if version is None:
            version = G.nodes[previous]["version"] + 1 if previous else 1
        node = f"{name}@{version}"
        G.add_node(node, type="variable", kind=kind, name=name, version=version, value=jsonable(value),
                   created=self._clock, time=time.time(), **attrs)
        self._newest[G.graph["conversation"]][name] = node
        return node

    def _resolve(self, G: nx.DiGraph, ref: str) -> str | None:
        _, name, version = split_ref(ref)
        if version is not None:
            return ref if ref in G else None
        return self._latest(G, name)

    def _read(self, G: nx.DiGraph, refs: Iterable[str], op: str) -> None:
        for ref in refs:
            node = self._resolve(G, ref)
            if node is not None and node != op and G.nodes[node].get("type") == "variable":
                G.add_edge(node, op, rel="read")

    def _op(self, G: nx.DiGraph, event: OpEvent) -> None:
        if event.phase == "start":
            call: OpCall = event.data["call"]
            G.add_node(call.op_id, type="op", operation=call.operation, pipeline=call.pipeline, op_kind=call.kind,
                       predictor=call.predictor, prompt_version=call.prompt_version, inputs=jsonable(call.inputs),
                       inputs_hash=inputs_hash(call.inputs), output=None, start=self._clock, end=None,
                       started_at=event.data["time"], seconds=None, lm_calls=0, input_tokens=0, output_tokens=0,
                       error=None, overridden=False, searched=False, parent=event.data.get("parent"))
            self._op_graph[call.op_id] = G
            if call.prompt_version is not None:
                self._read(G, [self._prompt(G, call)], call.op_id)
            self._read(G, call.reads, call.op_id)
        elif event.op_id in G and event.phase == "usage":
            node = G.nodes[event.op_id]
            for key in ("lm_calls", "input_tokens", "output_tokens"):
                node[key] += event.data[key]
        elif event.op_id in G:
            node = G.nodes[event.op_id]
            node.update(end=self._clock, seconds=event.data.get("seconds"), error=event.data.get("error"),
                        output=jsonable(event.data.get("output")))

    def _prompt(self, G: nx.DiGraph, call: OpCall) -> str:
        name = f"prompt:{call.pipeline}.{call.operation}"
        current = self._latest(G, name)
        if current is None or G.nodes[current].get("hash") != call.prompt_version:
            current = self._add_var(G, name, "prompt", call.prompt, hash=call.prompt_version)
        return current

    def _store(self, G: nx.DiGraph, event: StoreEvent) -> None:
        op = event.op_id if event.op_id in G else None
        if event.action in ("ADD", "UPDATE", "DELETE"):
            meta = event.metadata
            name = f"{event.store}:{event.unit_id}"
            previous = self._latest(G, name)
            node = self._add_var(
                G, name, event.store, event.text, version=event.version, action=event.action,
                deleted=event.action == "DELETE", sources=list(meta.get("source") or []),
                session_date=meta.get("session_date"), speaker=meta.get("speaker"),
                derived_from=([previous] if previous else []) + [f"turn:{d}" for d in meta.get("source") or []],
            )
            if op is not None:
                G.add_edge(op, node, rel="write")
        elif op is not None:
            if event.action in ("SEARCH", "LIVE"):
                G.nodes[op]["searched"] = True
            self._read(G, (f"{event.store}:{unit}@{version}" for unit, version in event.results), op)

    def _var(self, G: nx.DiGraph, event: VarEvent) -> None:
        kind, name, _ = split_ref(event.ref)
        if kind == "conversation":
            G.graph["speakers"] = {"a": event.value["speaker_a"], "b": event.value["speaker_b"]}
            G.graph["sessions"] = event.value["sessions"]
            return
        node = self._add_var(G, name, kind, event.value, derived_from=list(event.derived_from))
        if event.op_id in G:
            G.add_edge(event.op_id, node, rel="write")

    # --- cases -----------------------------------------------------------------------------------
    def record_cases(self, cases: Iterable[Case]) -> None:
        """Keep the question cases (gold, evidence) in the graphs of their conversations."""
        with self._lock:
            for case in cases:
                G = self.graphs.get(case.sample_id)
                if G is not None and all(c["case_id"] != case.case_id for c in G.graph["cases"]):
                    G.graph["cases"].append({"case_id": case.case_id, "key": case.case_id.split(":")[-1],
                                             "question": case.question, "gold": case.gold,
                                             "evidence": list(case.evidence), "category": case.category,
                                             **({"question_date": case.question_date} if case.question_date else {})})


@contextlib.contextmanager
def trace(system: Any = None) -> Iterator[Tracer]:
    """Record everything run inside the block (this context and the threads it copies) as graphs."""
    import dspy

    tracer = Tracer(system)
    with listen(tracer.handle), dspy.context(track_usage=True):
        yield tracer
