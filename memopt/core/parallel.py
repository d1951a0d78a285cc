"""Independent work run concurrently without losing its context: ordered maps over a thread pool.

Every task runs in a copy of the submitting thread's context (`contextvars.copy_context()`), so
DSPy's settings (the LM, callbacks, usage tracking), memopt's event listeners (tracing) and
interceptors (replay) follow the work into the worker thread. Results come back in input order,
whatever order the tasks finish in; when a task raises, the first exception (in input order) is
raised once every task has ended, so no work is left running. With ``workers <= 1`` the tasks run
one after another in the calling thread.

Worker threads are the process's, not the pool's: a pool (`worker_pool`) runs its tasks on idle
threads left by earlier pools, and starts a thread only when none is idle; a thread that stays idle for
`IDLE_SECONDS` ends. What a thread builds once stays with it from one round, split or trial to the
next: the reply cache's SQLite connections (one per shard and thread: opening one costs a connect and
a dozen PRAGMA queries) and an asyncio event loop. LiteLLM reports every synchronous call to its
service logger through ``asyncio.get_event_loop()``; in a thread without a loop that is a new loop per
call (``asyncio.run``), so each worker thread sets one when it starts and closes it when it ends.
A pool still runs at most ``workers`` of its tasks at once, and leaving it waits for all of them.

Calls started ahead (`ahead`): a memory system whose ingestion is a chain of LM calls, some of which do not
depend on the chain (Mem0's fact extraction of a later session reads that session's turns only), may start
those early, so the chain waits on one call per link instead of two. The harness allows it where it runs
work concurrently (`allow_ahead`); elsewhere, and whenever the caller says no, each call runs when its
result is asked for, in the caller's order. Either way the same calls are made with the same inputs, so the
same replies come back; only their timing differs.

>>> map_ordered(lambda x: x * x, [1, 2, 3], workers=2)
[1, 4, 9]
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import contextvars
import itertools
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from concurrent.futures import wait as futures_wait
from typing import Any, TypeVar

__all__ = ["IDLE_SECONDS", "ahead", "ahead_allowed", "allow_ahead", "map_ordered", "submit_in_context", "worker_pool"]

IDLE_SECONDS = 60.0

T = TypeVar("T")
R = TypeVar("R")

_AHEAD: contextvars.ContextVar[int] = contextvars.ContextVar("memopt_ahead", default=0)


def submit_in_context(pool: Executor, fn: Callable[..., R], *args: Any) -> Future[R]:
    """Submit ``fn(*args)`` to ``pool``, run in a copy of the current context."""
    return pool.submit(contextvars.copy_context().run, fn, *args)


class _Threads:
    """The process's worker threads: a job goes to an idle one, or to a new one when none is idle."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._free = 0  # threads waiting for a job that no submitted job has claimed yet
        self._names = itertools.count(1)

    def run(self, job: Callable[[], None]) -> None:
        """Run ``job`` on an idle thread (a new one if none is free); ``job`` must not raise."""
        with self._lock:
            start = self._free == 0
            if not start:
                self._free -= 1
        self._jobs.put(job)
        if start:
            threading.Thread(target=self._work, name=f"memopt-worker-{next(self._names)}", daemon=True).start()

    def _work(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            while True:
                try:
                    job = self._jobs.get(timeout=IDLE_SECONDS)
                except queue.Empty:
                    with self._lock:
                        if self._free > 0:  # nobody counts on this thread: it ends
                            self._free -= 1
                            return
                    continue  # a job was promised to a waiting thread: take it
                job()
                del job
                with self._lock:
                    self._free += 1
        finally:
            asyncio.set_event_loop(None)
            loop.close()


_THREADS = _Threads()


class _Pool(Executor):
    """At most ``workers`` of its tasks at once on the process's threads; ``shutdown(wait=True)`` waits for all."""

    def __init__(self, workers: int) -> None:
        self._workers = max(1, workers)
        self._lock = threading.Lock()
        self._running = 0
        self._waiting: collections.deque[tuple[Future[Any], Callable[[], Any]]] = collections.deque()
        self._futures: list[Future[Any]] = []
        self._closed = False

    def submit(self, fn: Callable[..., R], /, *args: Any, **kwargs: Any) -> Future[R]:
        """Schedule ``fn(*args, **kwargs)``; it starts when fewer than ``workers`` of this pool's tasks run."""
        future: Future[R] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot submit to a worker pool that was shut down")
            self._futures.append(future)
            if self._running >= self._workers:
                self._waiting.append((future, lambda: fn(*args, **kwargs)))
                return future
            self._running += 1
        _THREADS.run(lambda: self._step(future, lambda: fn(*args, **kwargs)))
        return future

    def _step(self, future: Future[Any], call: Callable[[], Any]) -> None:
        """Run one task, then this pool's next waiting one on the same thread, until none waits."""
        while True:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as e:  # noqa: BLE001 - handed to whoever waits on the future
                    future.set_exception(e)
            with self._lock:
                if not self._waiting:
                    self._running -= 1
                    return
                future, call = self._waiting.popleft()

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Accept no more tasks; with ``wait``, return when every submitted task has ended."""
        with self._lock:
            self._closed = True
            if cancel_futures:
                for future, _ in self._waiting:
                    future.cancel()
            futures = list(self._futures)
        if wait:
            futures_wait(futures)


@contextlib.contextmanager
def worker_pool(workers: int) -> Iterator[Executor]:
    """A pool running at most ``workers`` tasks at once on the process's reused worker threads; leaving the block
    waits for every task."""
    pool = _Pool(workers)
    try:
        yield pool
    finally:
        pool.shutdown(wait=True)


def map_ordered(fn: Callable[[T], R], items: Iterable[T], *, workers: int) -> list[R]:
    """``[fn(item) for item in items]``, with up to ``workers`` items at once; results in input order."""
    items = list(items)
    if workers <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    with worker_pool(min(workers, len(items))) as pool:
        futures = [submit_in_context(pool, fn, item) for item in items]
    return [f.result() for f in futures]


@contextlib.contextmanager
def allow_ahead(workers: int) -> Iterator[None]:
    """Within the block (and the work it submits), `ahead` may run up to ``workers`` calls early."""
    token = _AHEAD.set(workers)
    try:
        yield
    finally:
        _AHEAD.reset(token)


def ahead_allowed() -> bool:
    """Whether `ahead` may start calls early here."""
    return _AHEAD.get() > 1


@contextlib.contextmanager
def ahead(*, enabled: bool = True) -> Iterator[Callable[[Callable[[], R]], Callable[[], R]]]:
    """``with ahead() as start: later = start(fn)``; ``later()`` returns (or raises) ``fn()``'s result.

    Where `allow_ahead` allows it and ``enabled``, ``fn`` starts now on a worker thread (in a copy of this
    context); otherwise ``later()`` runs it, the first time it is asked. Leaving the block cancels the calls not
    yet started and waits for the running ones, so none outlives it.
    """
    if not (enabled and ahead_allowed()):
        yield _deferred
        return
    pool = _Pool(_AHEAD.get())
    try:
        yield lambda fn: submit_in_context(pool, fn).result
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _deferred(fn: Callable[[], R]) -> Callable[[], R]:
    """``fn`` run the first time the returned function is called; its result kept for later calls."""
    done: list[R] = []

    def later() -> R:
        if not done:
            done.append(fn())
        return done[0]

    return later
