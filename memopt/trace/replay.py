"""Executable graphs: run a recorded conversation again with one operation's output replaced.

``replay(G, overrides={op_id: output})`` rebuilds the conversation and the memory system from the
graph, then runs ingestion and the recorded questions again under a `ReplayCache`:

- an overridden op returns the given output (an LLM op's output is its dict of output fields,
  e.g. ``{"facts": [...]}``; a tool op's output is what its function returns);
- an LLM op whose (op id, inputs, prompt version) matches a recorded op returns the recorded
  output without calling the LM — every op upstream of an override, and every op downstream whose
  inputs did not change;
- every other op runs again (non-LLM ops always run; they are deterministic and cheap).

Replay with no overrides reproduces every output exactly with zero LM calls. The result is a new
traced graph, the answers, and which LLM ops were served from the cache or ran again. An
overridden op is marked ``overridden`` and recorded as reading the variables its given output
names (``"ref"`` fields) and, when it searched a store in the recorded run, as having searched it,
so provenance stays connected.
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from memopt.core.errors import ConfigError
from memopt.core.text import parse_session_date
from memopt.data.model import Conversation, Session, Turn
from memopt.systems.ops import OpCall, intercept
from memopt.trace.graph import ops_in_order, variables
from memopt.trace.tracer import inputs_hash, jsonable, trace

__all__ = ["ReplayCache", "ReplayResult", "replay", "replay_lm", "conversation_of", "questions_of", "downstream_ops"]

_REPLAY_LM: contextvars.ContextVar[Any] = contextvars.ContextVar("memopt_replay_lm", default=None)


@contextlib.contextmanager
def replay_lm(lm: Any) -> Iterator[None]:
    """Within the block, replays that are given no ``lm`` run on this one (an optimizer's counted task LM), not on
    a new LM built from the graph's recorded spec."""
    token = _REPLAY_LM.set(lm)
    try:
        yield
    finally:
        _REPLAY_LM.reset(token)


class ReplayCache:
    """Serves recorded LLM outputs and overrides; records what ran again (an `Interceptor`)."""

    def __init__(self, G: nx.DiGraph, overrides: dict[str, Any] | None = None) -> None:
        self.overrides = dict(overrides or {})
        unknown = [op for op in self.overrides if op not in G or G.nodes[op].get("type") != "op"]
        if unknown:
            raise ConfigError(f"replay: no operation {', '.join(unknown)} in the graph of "
                              f"{G.graph.get('conversation')}.")
        self.cache = {
            (n, d["inputs_hash"], d["prompt_version"]): d["output"]
            for n, d in G.nodes(data=True)
            if d.get("type") == "op" and d["op_kind"] == "llm" and d.get("error") is None
        }
        self.served: list[str] = []
        self.reran: list[str] = []
        self.overridden: list[str] = []

    def run(self, call: OpCall, execute: Callable[[], Any]) -> Any:
        """Override, serve from the cache, or run."""
        if call.op_id in self.overrides:
            self.overridden.append(call.op_id)
            return copy.deepcopy(self.overrides[call.op_id])
        if call.kind == "llm":
            key = (call.op_id, inputs_hash(call.inputs), call.prompt_version)
            if key in self.cache:
                self.served.append(call.op_id)
                return copy.deepcopy(self.cache[key])
            self.reran.append(call.op_id)
        return execute()


@dataclass
class ReplayResult:
    """What a replay produced."""

    graph: nx.DiGraph
    answers: dict[str, str]
    lm_calls: int
    served: list[str] = field(default_factory=list)
    reran: list[str] = field(default_factory=list)
    overridden: list[str] = field(default_factory=list)


def conversation_of(G: nx.DiGraph) -> Conversation:
    """The conversation a graph recorded, rebuilt from its turn variables and metadata."""
    dates = {s["index"]: s["date_time"] for s in G.graph.get("sessions", [])}
    turns: dict[int, list[Turn]] = {}
    for node in variables(G, "turn"):
        value = G.nodes[node]["value"]
        dia_id = G.nodes[node]["name"].split(":", 1)[1]
        turns.setdefault(int(value["session"]), []).append(Turn(dia_id, value["speaker"], value["text"],
                                                                int(value["session"])))
    if not turns:
        raise ConfigError(f"replay: the graph of {G.graph.get('conversation')} has no turns to replay.")
    sessions = tuple(Session(i, dates.get(i, ""), parse_session_date(dates.get(i, "")), tuple(ts))
                     for i, ts in sorted(turns.items()))
    speakers = G.graph.get("speakers") or {}
    return Conversation(G.graph["conversation"], speakers.get("a", ""), speakers.get("b", ""), sessions)


def questions_of(G: nx.DiGraph) -> dict[str, str]:
    """Question key (``q12``) → question text, for every question the graph recorded."""
    prefix = f"question:{G.graph['conversation']}:"
    return {G.nodes[n]["name"].removeprefix(prefix): G.nodes[n]["value"] for n in variables(G, "question")
            if G.nodes[n]["version"] == 1}


def replay(G: nx.DiGraph, overrides: dict[str, Any] | None = None, *, cases: Iterable[str] | None = None,
           lm: Any = None, system: Any = None) -> ReplayResult:
    """Run the recorded conversation again with ``overrides``; see the module docstring. The LM is ``lm``, else
    the one `replay_lm` set, else one built from the graph's recorded spec."""
    import dspy

    from memopt.lm.build import make_lm
    from memopt.lm.usage import UsageMeter
    from memopt.systems import system_class

    if system is None:
        cls = system_class(G.graph["pipeline"])
        system = cls(instructions=G.graph["instructions"], **G.graph.get("knobs", {}))
    if lm is None:
        lm = _REPLAY_LM.get()
    if lm is None:
        lm = make_lm(G.graph.get("lm") or "sim")
    questions = questions_of(G)
    if cases is not None:
        wanted = list(cases)
        missing = [k for k in wanted if k not in questions]
        if missing:
            raise ConfigError(f"replay: the graph of {G.graph['conversation']} has no question {', '.join(missing)}.")
        questions = {k: questions[k] for k in wanted}
    cache = ReplayCache(G, overrides)
    meter = UsageMeter()
    conversation = conversation_of(G)
    answers: dict[str, str] = {}
    with dspy.context(lm=lm), meter.track(), trace(system) as tracer, intercept(cache):
        system.ingest(conversation)
        for key, question in questions.items():
            answers[key] = str(system.ask(question, conversation_id=conversation.sample_id, key=key).answer)
    new = tracer.graphs.get(conversation.sample_id, nx.DiGraph())
    new.graph["cases"] = copy.deepcopy(G.graph.get("cases", []))
    for op in cache.overridden:
        if op in new:
            new.nodes[op]["overridden"] = True
            new.nodes[op]["output"] = jsonable(cache.overrides[op])
            new.nodes[op]["searched"] = bool(G.nodes[op].get("searched"))  # what it read, it read as recorded
            for ref in _refs(new.nodes[op]["output"]):
                if ref in new and new.nodes[ref]["created"] < new.nodes[op]["start"]:
                    new.add_edge(ref, op, rel="read")
    return ReplayResult(new, answers, meter.total().calls, cache.served, cache.reran, cache.overridden)


def _refs(value: Any) -> list[str]:
    """Variable references (``"ref"`` fields) inside an op output."""
    if isinstance(value, dict):
        return ([value["ref"]] if isinstance(value.get("ref"), str) else []) + [
            r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def downstream_ops(G: nx.DiGraph, op: str) -> list[str]:
    """Operations that depend on ``op``'s outputs, in start order."""
    after = nx.descendants(G, op)
    return [n for n in ops_in_order(G) if n in after]
