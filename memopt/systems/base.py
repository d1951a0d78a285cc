"""`MemorySystem`: the common base of memory systems written as DSPy modules, and `OpSpec`.

A memory system ingests a conversation into its memory (``ingest``), then answers questions from
it (``ask``, ``answer_case``). Each
LLM operation is a named ``dspy.Predict`` whose instructions come from a prompt file
(``<prompts>/<system>/<op>.md``); each non-LLM operation (chunk, retrieve, truncate, fuse, store
writes) is a plain function. All of them run through `memopt.systems.ops.run_op`, so a tracer can record
them and a replayer can intercept them. Systems are registered with `memopt.systems.memory_system`
(which validates the `OpSpec` declarations) and built by name with `memopt.systems.make_system`.

Contract for subclasses (in the spirit of gepa's adapter):

- ``operations`` declares every op as an `OpSpec`: LLM or tool, ingest or query, its stage(s) of
  the taxonomy, and for an op whose behaviour other ops or knobs set (``steered_by``) which ones.
- ``build_memory(conversation)`` builds and returns the memory state of one conversation; it may
  only use the conversation's turns, never its questions.
- ``respond(state, question, as_of=..., key=...)`` answers from that state without changing it,
  and returns a ``dspy.Prediction`` with at least ``answer``.
- Inputs are never mutated (the conversation, the question, the state passed to ``respond``).
- Every op runs through ``llm`` or ``tool`` and returns plain data; what an op changes in the
  memory follows from its returned output (write the store after it returns, naming its op id),
  so a replay that overrides the output changes the memory accordingly.
- Operation ids are ``<op>:<sample_id>:<key>`` with a key that is stable across runs, so a replay
  can name the op to override.
- A failure inside ``build_memory`` or ``respond`` may raise: the harness (`memopt.evaluate.run`)
  scores the affected cases as failed with the error kept and goes on.
- An LLM operation runs with the adapter its LM carries, if any (`memopt.lm.adapter.adapter_scope`).
- Calls of a chain that do not depend on it may start early (``with self.ahead() as start``, see
  `memopt.core.parallel.ahead`) while the harness runs work concurrently and no replay intercepts; a tracer
  still receives their events in a serial run's order.
- Ingestion is cached by (pipeline, conversation content, ingest-op prompts, ingest knobs, task
  LM): evaluating a new answer prompt does not re-ingest. The cache is bypassed while a tracer
  listens or a replayer intercepts, so those always see every operation. One key is built once:
  a thread that needs a memory another thread is building waits for it instead of building it again.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, Literal

import dspy

from memopt.core.errors import ConfigError
from memopt.core.parallel import ahead, ahead_allowed
from memopt.data.model import Case, Conversation
from memopt.lm.adapter import adapter_scope
from memopt.lm.build import ask
from memopt.systems.events import OpEvent, conversation_scope, emit, held, listening
from memopt.systems.ops import OpCall, intercepting, produce, run_op
from memopt.systems.prompts import load_prompts, prompt_hash

__all__ = ["OpSpec", "MemorySystem", "clear_ingest_cache"]

ASKED_ON: contextvars.ContextVar[str | None] = contextvars.ContextVar("memopt_asked_on", default=None)
CURRENT_DATE = "Current date: "  # the context line that carries the question date to the answer op


@dataclass(frozen=True)
class OpSpec:
    """One operation of a memory system and what the loop needs to know about it.

    ``stages``: the taxonomy stage(s) the op belongs to (``extraction``, ``update``, ``deletion``,
    ``retrieval``, ``response``; a string for one); attribution labels a fault at the op by them.
    ``steered_by``: the ops and knobs of the same system that set how this op behaves without being
    its content: a query (``retrieve`` steered by ``rewrite_query`` and ``top_k``), segment
    boundaries, a candidate list, a budget. A blamed tool op's feedback goes to the LLM ops that steer
    it (knob-steered ones are left to the knob search), and a steering op, which carries no content of
    its own, is judged through the op it steers. An op whose output is another op's content (facts
    to an update) is upstream of it, not steering it.
    """

    name: str
    kind: Literal["llm", "tool"]
    phase: Literal["ingest", "query"]
    description: str
    signature: type[dspy.Signature] | None = None
    stages: tuple[str, ...] | str = ()
    steered_by: tuple[str, ...] | str = ()

    def __post_init__(self) -> None:
        for name in ("stages", "steered_by"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))

    @property
    def is_llm(self) -> bool:
        """Whether the op is an LLM op (it has a prompt)."""
        return self.kind == "llm"

    @property
    def prompt_file(self) -> str | None:
        """The prompt file name of an LLM op (``<op>.md``), None for a tool op."""
        return f"{self.name}.md" if self.is_llm else None

    def to_dict(self) -> dict[str, Any]:
        """The declaration as plain data (recorded in every evolution graph)."""
        return {"kind": self.kind, "phase": self.phase, "stages": list(self.stages),
                "steered_by": list(self.steered_by), "description": self.description}


_CACHE_SIZE = 256
_INGEST_CACHE: OrderedDict[tuple, Any] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_BUILDING: dict[tuple, threading.Event] = {}


def _cached_or_claim(key: tuple) -> Any:
    """The cached memory state of ``key``; else None, and ``key`` is claimed (others wait) until `_release`."""
    while True:
        with _CACHE_LOCK:
            state = _INGEST_CACHE.get(key)
            if state is not None:
                _INGEST_CACHE.move_to_end(key)
                return state
            building = _BUILDING.get(key)
            if building is None:
                _BUILDING[key] = threading.Event()
                return None
        building.wait()


def _release(key: tuple) -> None:
    with _CACHE_LOCK:
        building = _BUILDING.pop(key, None)
    if building is not None:
        building.set()


def clear_ingest_cache() -> None:
    """Forget every cached memory state."""
    with _CACHE_LOCK:
        _INGEST_CACHE.clear()


def _lm_key() -> tuple:
    lm = dspy.settings.lm
    if lm is None:
        return (None,)
    engine = getattr(lm, "_engine_spec", None)
    seed = getattr(getattr(engine, "sim", None), "seed", None)
    return (lm.model, seed, json.dumps(getattr(lm, "kwargs", {}), sort_keys=True, default=str))


class MemorySystem(dspy.Module):
    """Base class of memory systems: see the module docstring for the contract."""

    name: ClassVar[str] = ""
    operations: ClassVar[tuple[OpSpec, ...]] = ()
    defaults: ClassVar[dict[str, int]] = {}
    ingest_knobs: ClassVar[tuple[str, ...]] = ()
    seed_prompts: ClassVar[Path | None] = None  # <dir>/<name>/<op>.md; None: memopt's prompts/ folder

    def __init__(self, *, prompts: str | Path | None = None, instructions: dict[str, str] | None = None,
                 **knobs: int) -> None:
        super().__init__()
        self.check_knobs(knobs)
        self.knobs = {**self.defaults, **knobs}
        self.prompts_dir = prompts
        texts = load_prompts(self.name, self.llm_operations(), prompts or self.seed_prompts, every_operation=True)
        texts.update(instructions or {})
        for spec in self.operations:
            if spec.is_llm:
                setattr(self, spec.name, dspy.Predict(spec.signature.with_instructions(texts[spec.name])))
        self._states: dict[str, Any] = {}
        self._lock = threading.Lock()

    # --- introspection -------------------------------------------------------------------------
    @classmethod
    def llm_operations(cls) -> list[str]:
        """Names of the LLM operations (those with a prompt file)."""
        return [s.name for s in cls.operations if s.is_llm]

    @classmethod
    def op_spec(cls, name: str) -> OpSpec:
        """The spec of one operation by name."""
        for spec in cls.operations:
            if spec.name == name:
                return spec
        raise ConfigError(f"pipeline {cls.name} has no operation {name!r}; it has "
                          f"{', '.join(s.name for s in cls.operations)}.")

    @classmethod
    def operation_specs(cls) -> dict[str, dict[str, Any]]:
        """Every operation's declaration as plain data, by name (what a traced graph records)."""
        return {spec.name: spec.to_dict() for spec in cls.operations}

    @classmethod
    def prompt_ops(cls, op: str) -> tuple[str, ...]:
        """The LLM ops whose prompts steer ``op``: itself for an LLM op; for a tool op, the LLM ops in its
        ``steered_by`` (through steering tool ops too); empty when only knobs steer it."""
        found: list[str] = []
        todo, seen = [op], set()
        while todo:
            spec = cls.op_spec(todo.pop(0))
            if spec.name in seen:
                continue
            seen.add(spec.name)
            if spec.is_llm:
                found.append(spec.name)
                continue
            todo += [s for s in spec.steered_by if s not in cls.defaults]
        return tuple(dict.fromkeys(found))

    @classmethod
    def steering_knobs(cls, op: str) -> tuple[str, ...]:
        """The knobs that steer ``op`` (from its ``steered_by``)."""
        return tuple(s for s in cls.op_spec(op).steered_by if s in cls.defaults)

    def instructions(self) -> dict[str, str]:
        """The current instruction text of every LLM operation."""
        return {op: getattr(self, op).signature.instructions for op in self.llm_operations()}

    def prompt_versions(self) -> dict[str, str]:
        """Content hash of every LLM operation's instructions."""
        return {op: prompt_hash(text) for op, text in self.instructions().items()}

    def with_instructions(self, changes: dict[str, str]) -> MemorySystem:
        """A new system of the same kind and knobs with some instructions replaced."""
        for op in changes:
            if op not in self.llm_operations():
                raise ConfigError(f"pipeline {self.name} has no LLM operation {op!r}; it has "
                                  f"{', '.join(self.llm_operations())}.")
        return type(self)(prompts=self.prompts_dir, instructions={**self.instructions(), **changes}, **self.knobs)

    @classmethod
    def check_knobs(cls, knobs: dict[str, Any]) -> None:
        """Raise `ConfigError` for an unknown knob or a value that is not a whole number of at least 1."""
        unknown = sorted(set(knobs) - set(cls.defaults))
        if unknown:
            raise ConfigError(f"pipeline {cls.name}: unknown knob(s) {', '.join(unknown)}; "
                              f"known: {', '.join(sorted(cls.defaults)) or 'none'}.")
        for key, value in knobs.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"pipeline {cls.name}: knob {key}={value!r}: must be a whole number of at "
                                  "least 1 (knobs are counts and sizes).")

    def with_knobs(self, **knobs: int) -> MemorySystem:
        """A new system with the same instructions and some knobs changed."""
        return type(self)(prompts=self.prompts_dir, instructions=self.instructions(), **{**self.knobs, **knobs})

    def __deepcopy__(self, memo: dict) -> MemorySystem:
        return type(self)(prompts=self.prompts_dir, instructions=self.instructions(), **self.knobs)

    def __getstate__(self) -> dict[str, Any]:
        """What pickling keeps (``save(path, save_program=True)``, then ``dspy.load``): the program (its predictors,
        knobs, prompts folder), not the memory of conversations it ingested, nor its lock."""
        state = {k: v for k, v in super().__getstate__().items() if k != "_lock"}
        state["_states"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)
        self._lock = threading.Lock()

    # --- memory lifecycle --------------------------------------------------------------------------
    def ingest(self, conversation: Conversation) -> None:
        """Build (or fetch from the ingestion cache) the memory of one conversation."""
        cacheable = not listening() and not intercepting()
        key = self._ingest_key(conversation)
        state = _cached_or_claim(key) if cacheable else None
        if state is None:
            try:
                with conversation_scope(conversation.sample_id):
                    if not cacheable:
                        self._announce(conversation)
                    state = self.build_memory(conversation)
                if cacheable:
                    with _CACHE_LOCK:
                        _INGEST_CACHE[key] = state
                        while len(_INGEST_CACHE) > _CACHE_SIZE:
                            _INGEST_CACHE.popitem(last=False)
            finally:
                if cacheable:
                    _release(key)
        with self._lock:
            self._states[conversation.sample_id] = state

    @staticmethod
    def _announce(conversation: Conversation) -> None:
        """Announce the conversation (metadata) and its turns (source variables) to a listening tracer."""
        produce(f"conversation:{conversation.sample_id}", {
            "speaker_a": conversation.speaker_a, "speaker_b": conversation.speaker_b,
            "sessions": [{"index": s.index, "date_time": s.date_time} for s in conversation.sessions]})
        for turn in conversation.turns:
            produce(f"turn:{turn.dia_id}", {"speaker": turn.speaker, "text": turn.text, "session": turn.session})

    def _ingest_key(self, conversation: Conversation) -> tuple:
        content = hash(tuple((s.date_time, tuple((t.dia_id, t.speaker, t.text) for t in s.turns))
                             for s in conversation.sessions))
        prompts = tuple(sorted((op, v) for op, v in self.prompt_versions().items()
                               if self.op_spec(op).phase == "ingest"))
        knobs = tuple((k, self.knobs[k]) for k in self.ingest_knobs)
        return (self.name, conversation.sample_id, content, prompts, knobs, _lm_key())

    def state(self, conversation_id: str) -> Any:
        """The memory state of an ingested conversation."""
        with self._lock:
            if conversation_id not in self._states:
                raise ConfigError(f"pipeline {self.name}: conversation {conversation_id!r} was not ingested.")
            return self._states[conversation_id]

    def ask(self, question: str, *, conversation_id: str, as_of: int | None = None,
            key: str | None = None) -> dspy.Prediction:
        """Answer a question from the memory of an ingested conversation (as of a session index)."""
        key = key or f"q{prompt_hash(question)[:8]}"
        with conversation_scope(conversation_id):
            return self.respond(self.state(conversation_id), question, as_of=as_of, key=key)

    def answer_case(self, case: Case, *, as_of: int | None = None) -> dspy.Prediction:
        """Answer one question case of an ingested conversation (on its question date, when it has one)."""
        token = ASKED_ON.set(case.question_date)
        try:
            return self.ask(case.question, conversation_id=case.sample_id, as_of=as_of,
                            key=case.case_id.split(":")[-1])
        finally:
            ASKED_ON.reset(token)

    def forward(self, conversation: Conversation, question: str) -> dspy.Prediction:
        """DSPy entry point: ingest (cached) and answer; the prediction carries the instructions that produced it."""
        self.ingest(conversation)
        prediction = self.ask(question, conversation_id=conversation.sample_id)
        prediction["instructions"] = self.instructions()
        return prediction

    # --- hooks for subclasses --------------------------------------------------------------------
    def build_memory(self, conversation: Conversation) -> Any:
        """Build the memory state of one conversation (subclasses implement)."""
        raise NotImplementedError

    def respond(self, state: Any, question: str, *, as_of: int | None, key: str) -> dspy.Prediction:
        """Answer from a memory state (subclasses implement)."""
        raise NotImplementedError

    # --- running operations ------------------------------------------------------------------------
    @staticmethod
    def op_id(op: str, op_key: str) -> str:
        """The id of operation ``op`` run under ``op_key`` (``<sample_id>:<key>``): ``<op>:<sample_id>:<key>``."""
        return f"{op}:{op_key}"

    def llm(self, op: str, op_key: str, *, reads: Iterable[str] = (), **inputs: Any) -> dict[str, Any]:
        """Run an LLM operation; returns its output fields as plain data."""
        predictor = getattr(self, op)
        instructions = predictor.signature.instructions
        call = OpCall(self.op_id(op, op_key), op, self.name, "llm", inputs, tuple(reads), prompt_hash(instructions),
                      op, instructions)

        def execute() -> dict[str, Any]:
            with adapter_scope():
                prediction = ask(predictor, **inputs)
            if listening():
                usage = (prediction.get_lm_usage() or {}).values()
                emit(OpEvent("op", "usage", call.op_id, op, self.name, {
                    "lm_calls": 1, "input_tokens": sum(int(u.get("prompt_tokens") or 0) for u in usage),
                    "output_tokens": sum(int(u.get("completion_tokens") or 0) for u in usage)}))
            return {name: _plain(prediction[name]) for name in predictor.signature.output_fields}

        return run_op(call, execute)

    def answer_from(self, op_key: str, question: str, question_ref: str, context: str, held: list[str],
                    context_op: str, **extra: Any) -> dspy.Prediction:
        """The answer step every pipeline shares: announce the context (written by ``context_op``, holding the
        variables ``held``), run the ``answer`` op on it, announce the answer; returns the prediction."""
        if ASKED_ON.get():  # the question's own date is the answer step's "now" (LongMemEval's question_date)
            context = f"{CURRENT_DATE}{ASKED_ON.get()}\n{context}"
        context_ref = produce(f"context:{op_key}", context, held, op=self.op_id(context_op, op_key))
        out = self.llm("answer", op_key, reads=[question_ref, context_ref], question=question, context=context)
        answer = str(out.get("answer") or "")
        produce(f"answer:{op_key}", answer, [context_ref], op=self.op_id("answer", op_key))
        return dspy.Prediction(answer=answer, context=context, **extra)

    @contextlib.contextmanager
    def ahead(self) -> Iterator[Callable[[Callable[[], Any]], Callable[[], Any]]]:
        """`memopt.core.parallel.ahead`: off while a replay intercepts (it overrides ops in their serial order); while a
        tracer listens, each early call's events reach it when its result is taken, as in a serial run."""
        with ahead(enabled=not intercepting()) as start:
            if not (listening() and ahead_allowed()):
                yield start
                return

            def start_held(fn: Callable[[], Any]) -> Callable[[], Any]:
                later = start(partial(held, fn))
                return lambda: later()()

            yield start_held

    def tool(self, op: str, op_key: str, fn: Callable[..., Any], *, reads: Iterable[str] = (), **inputs: Any) -> Any:
        """Run a non-LLM operation ``fn(**inputs)``."""
        call = OpCall(self.op_id(op, op_key), op, self.name, "tool", inputs, tuple(reads))
        return run_op(call, lambda: fn(**inputs))


def _plain(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value
