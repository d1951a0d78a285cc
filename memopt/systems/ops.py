"""How one operation of a memory system runs: announced, scoped, and open to interception.

Every operation (LLM or not) runs through `run_op`: it emits an `OpEvent` at start and end (when
someone listens), marks itself as the current op (so store writes and LM calls made inside are
attributed to it), and lets an installed `Interceptor` decide how the operation executes. The
replay machinery of a later stage installs one to serve cached outputs and overrides; with no
interceptor the operation simply runs.

Operation outputs are plain data (dicts, lists, strings), so they can be cached, overridden,
serialised into graphs and compared.
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from memopt.systems.events import OpEvent, VarEvent, current_op, emit, listening, op_scope

__all__ = ["OpCall", "Interceptor", "intercept", "intercepting", "run_op", "produce"]


@dataclass(frozen=True)
class OpCall:
    """One execution of an operation: identity, inputs, what it reads, which prompt drives it."""

    op_id: str
    operation: str
    pipeline: str
    kind: Literal["llm", "tool"]
    inputs: dict[str, Any] = field(default_factory=dict)
    reads: tuple[str, ...] = ()
    prompt_version: str | None = None
    predictor: str | None = None
    prompt: str | None = None


class Interceptor(Protocol):
    """Decides how an operation executes (run it, or serve a cached / overridden output)."""

    def run(self, call: OpCall, execute: Callable[[], Any]) -> Any:
        """Return the operation's output; call ``execute()`` to really run it."""


_INTERCEPTOR: contextvars.ContextVar[Interceptor | None] = contextvars.ContextVar("memopt_interceptor", default=None)


@contextlib.contextmanager
def intercept(interceptor: Interceptor) -> Iterator[None]:
    """Route every operation run inside this block (in this context) through ``interceptor``."""
    token = _INTERCEPTOR.set(interceptor)
    try:
        yield
    finally:
        _INTERCEPTOR.reset(token)


def intercepting() -> bool:
    """Whether an interceptor is installed in this context."""
    return _INTERCEPTOR.get() is not None


def run_op(call: OpCall, execute: Callable[[], Any]) -> Any:
    """Run one operation: announce it, scope it, let the interceptor (if any) execute it."""
    observed = listening()
    if observed:
        emit(OpEvent("op", "start", call.op_id, call.operation, call.pipeline,
                     {"call": call, "parent": current_op(), "time": time.time()}))
    started = time.perf_counter()
    interceptor = _INTERCEPTOR.get()
    with op_scope(call.op_id):
        try:
            output = interceptor.run(call, execute) if interceptor is not None else execute()
        except Exception as e:
            if observed:
                emit(OpEvent("op", "end", call.op_id, call.operation, call.pipeline,
                             {"error": f"{type(e).__name__}: {e}", "seconds": time.perf_counter() - started,
                              "time": time.time()}))
            raise
    if observed:
        emit(OpEvent("op", "end", call.op_id, call.operation, call.pipeline,
                     {"output": output, "seconds": time.perf_counter() - started, "time": time.time()}))
    return output


def produce(ref: str, value: Any, derived_from: Iterable[str] = (), *, op: str | None = None) -> str:
    """Announce a variable (``kind:id``) written by operation ``op`` (default: the current one); returns ``ref``.

    A variable announced outside any operation (a dialogue turn, a question) is a source variable.
    """
    if listening():
        emit(VarEvent("var", ref, value, op if op is not None else current_op(), tuple(derived_from)))
    return ref
