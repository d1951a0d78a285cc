"""Events that memory systems emit while they run, and how to listen to them.

The memory store emits `StoreEvent`s; the pipeline runtime (`memopt.systems.ops`) emits `OpEvent`s and
`VarEvent`s (variables an operation writes that are not memory-store units). The
tracer (a later stage of the loop) listens with `listen(handler)`; nothing here knows about it.
Listeners are scoped with a context variable, so concurrent runs in different threads each see
only their own events. Emitting with no listener costs one context-variable lookup. Work started
early on another thread (`held`) keeps its events back until its result is taken, so listeners
receive them in the order a serial run would emit them.

A listener must never break the run it observes: exceptions raised by a handler are logged and
swallowed.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

__all__ = [
    "StoreEvent", "OpEvent", "VarEvent", "Event", "emit", "listen", "listening", "current_op", "op_scope",
    "current_conversation", "conversation_scope", "held",
]

logger = logging.getLogger(__name__)

R = TypeVar("R")


@dataclass(frozen=True)
class StoreEvent:
    """A write (ADD / UPDATE / DELETE) or a read (SEARCH / GET / LIVE) of the memory store."""

    kind: Literal["store"]
    action: Literal["ADD", "UPDATE", "DELETE", "SEARCH", "GET", "LIVE"]
    store: str
    seq: int
    op_id: str | None
    unit_id: str | None = None
    version: int | None = None
    text: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    query: str | None = None
    results: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class OpEvent:
    """The start or end of one operation of a memory system, or the LM usage of one of its LM calls."""

    kind: Literal["op"]
    phase: Literal["start", "end", "usage"]
    op_id: str
    operation: str
    pipeline: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VarEvent:
    """A variable written by an operation (a fact, a context, an answer, a chunk, an episode)."""

    kind: Literal["var"]
    ref: str
    value: Any
    op_id: str | None
    derived_from: tuple[str, ...] = ()


Event = StoreEvent | OpEvent | VarEvent
Handler = Callable[[Event], None]

_LISTENERS: contextvars.ContextVar[tuple[Handler, ...]] = contextvars.ContextVar("memopt_listeners", default=())
_CURRENT_OP: contextvars.ContextVar[str | None] = contextvars.ContextVar("memopt_current_op", default=None)
_CONVERSATION: contextvars.ContextVar[str | None] = contextvars.ContextVar("memopt_conversation", default=None)


def emit(event: Event) -> None:
    """Deliver an event to every listener of the current context."""
    for handler in _LISTENERS.get():
        try:
            handler(event)
        except Exception:  # a listener must never break the run it observes
            logger.exception("event listener failed on %s", type(event).__name__)


def listening() -> bool:
    """Whether any listener is active in the current context."""
    return bool(_LISTENERS.get())


@contextlib.contextmanager
def listen(handler: Handler) -> Iterator[None]:
    """Deliver the events emitted inside this block (in this context) to ``handler``."""
    token = _LISTENERS.set(_LISTENERS.get() + (handler,))
    try:
        yield
    finally:
        _LISTENERS.reset(token)


def current_op() -> str | None:
    """The id of the operation running in this context, if any."""
    return _CURRENT_OP.get()


@contextlib.contextmanager
def op_scope(op_id: str) -> Iterator[None]:
    """Mark ``op_id`` as the running operation inside this block."""
    token = _CURRENT_OP.set(op_id)
    try:
        yield
    finally:
        _CURRENT_OP.reset(token)


def current_conversation() -> str | None:
    """The id of the conversation whose memory is being built or queried in this context, if any."""
    return _CONVERSATION.get()


@contextlib.contextmanager
def conversation_scope(sample_id: str) -> Iterator[None]:
    """Mark ``sample_id`` as the conversation being worked on inside this block."""
    token = _CONVERSATION.set(sample_id)
    try:
        yield
    finally:
        _CONVERSATION.reset(token)


def held(fn: Callable[[], R]) -> Callable[[], R]:
    """Run ``fn`` now with the events it emits kept back; the returned function emits them (to the listeners of
    the context it is called in) and returns, or raises, what ``fn`` did."""
    events: list[Event] = []
    token = _LISTENERS.set((events.append,))
    try:
        result, error = fn(), None
    except Exception as e:
        result, error = None, e
    finally:
        _LISTENERS.reset(token)

    def release() -> R:
        for event in events:
            emit(event)
        if error is not None:
            raise error
        return result  # type: ignore[return-value]

    return release
