"""Independent work run concurrently without losing its context: ordered maps over a thread pool.

Every task runs in a copy of the submitting thread's context (`contextvars.copy_context()`), so
DSPy's settings (the LM, callbacks, usage tracking), memopt's event listeners (tracing) and
interceptors (replay) follow the work into the worker thread. Results come back in input order,
whatever order the tasks finish in; when a task raises, the first exception (in input order) is
raised once every task has ended, so no work is left running. With ``workers <= 1`` the tasks run
one after another in the calling thread.

>>> map_ordered(lambda x: x * x, [1, 2, 3], workers=2)
[1, 4, 9]
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["map_ordered", "submit_in_context"]

T = TypeVar("T")
R = TypeVar("R")


def submit_in_context(pool: ThreadPoolExecutor, fn: Callable[..., R], *args: Any) -> Future[R]:
    """Submit ``fn(*args)`` to ``pool``, run in a copy of the current context."""
    return pool.submit(contextvars.copy_context().run, fn, *args)


def map_ordered(fn: Callable[[T], R], items: Iterable[T], *, workers: int) -> list[R]:
    """``[fn(item) for item in items]``, with up to ``workers`` items at once; results in input order."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(workers, len(items)), thread_name_prefix="memopt") as pool:
        futures = [submit_in_context(pool, fn, item) for item in items]
    return [f.result() for f in futures]
