"""Client CPU per LM call (issue 26): work memopt's worker threads would otherwise redo on every call."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from memopt.core.parallel import map_ordered
from memopt.simlm import SimServer
from tests.conftest import InFlight


def _loops_of(workers: int) -> list[tuple[int, asyncio.AbstractEventLoop]]:
    barrier = threading.Barrier(workers)

    def loop_of(i: int) -> tuple[int, asyncio.AbstractEventLoop]:
        if i < workers:
            barrier.wait(timeout=10)  # that many tasks at once: that many threads
        return threading.get_ident(), asyncio.get_event_loop()

    return map_ordered(loop_of, range(4 * workers), workers=workers)


def _workers() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.name.startswith("memopt-worker")}


def test_worker_threads_keep_their_event_loop_and_outlive_the_pool():
    first = _loops_of(3)
    threads = _workers()
    second = _loops_of(3)
    per_thread: dict[int, set[int]] = {}
    for ident, loop in first + second:
        per_thread.setdefault(ident, set()).add(id(loop))
    assert len({ident for ident, _ in first}) == 3
    assert all(len(loops) == 1 for loops in per_thread.values())  # one loop per thread, across pools
    assert {ident for ident, _ in second} <= threads  # the second pool started no thread
    assert not any(loop.is_closed() for _, loop in second)


def test_idle_worker_threads_end_and_close_their_loop(monkeypatch):
    import memopt.core.parallel

    monkeypatch.setattr(memopt.core.parallel, "IDLE_SECONDS", 0.05)
    seen = _loops_of(3)
    deadline = time.monotonic() + 10
    while _workers() & {ident for ident, _ in seen} and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _workers() & {ident for ident, _ in seen}
    assert all(loop.is_closed() for _, loop in seen)


def test_a_pool_runs_at_most_its_workers_at_once_and_pools_nest():
    in_flight = InFlight()

    def task(i: int) -> int:
        with in_flight:
            time.sleep(0.005)
        return map_ordered(lambda j: i * 10 + j, range(3), workers=3)[-1]  # a pool inside a pool's task

    assert map_ordered(task, range(12), workers=2) == [i * 10 + 2 for i in range(12)]
    assert in_flight.peak == 2


def test_a_failing_task_is_raised_after_every_task_has_ended():
    ended = []

    def task(i: int) -> int:
        time.sleep(0.01 * (i % 3))
        ended.append(i)
        if i in (2, 5):
            raise ValueError(f"task {i}")
        return i

    with pytest.raises(ValueError, match="task 2"):
        map_ordered(task, range(9), workers=4)
    assert sorted(ended) == list(range(9))


def test_litellm_calls_in_worker_threads_start_no_event_loop_per_call(monkeypatch):
    import dspy

    from memopt.lm.build import make_lm

    started = []
    real_run = asyncio.run

    def counted(*args, **kwargs):
        started.append(threading.current_thread().name)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(asyncio, "run", counted)
    with SimServer() as server:
        lm = make_lm(f"openai/gpt-4.1-mini@{server.url}")
        predict = dspy.Predict("question -> answer")

        def ask(i: int) -> str:
            with dspy.context(lm=lm):
                return predict(question=f"What did Caroline paint on day {i}?").answer

        answers = map_ordered(ask, range(8), workers=4)
        in_memopt_pool = len(started)
        with ThreadPoolExecutor(4) as plain:  # LiteLLM's own per-call loop in threads without one
            list(plain.map(ask, range(8, 16)))
    assert len(answers) == 8 and all(answers)
    assert in_memopt_pool == 0
    assert len(started) - in_memopt_pool >= 8


def test_the_reply_cache_reaches_its_disk_from_one_thread_whatever_thread_calls(monkeypatch):
    import sqlite3

    import dspy

    from memopt.lm.build import make_lm

    opened: list[str] = []
    real_connect = sqlite3.connect

    def connect(*args, **kwargs):
        opened.append(threading.current_thread().name)
        return real_connect(*args, **kwargs)

    with SimServer() as server:
        lm = make_lm(f"openai/gpt-4.1-mini@{server.url}", cache=True)  # configures this test's reply cache
        monkeypatch.setattr(sqlite3, "connect", connect)
        predict = dspy.Predict("question -> answer")

        def ask(i: int) -> str:
            with dspy.context(lm=lm):
                return predict(question=f"Where did Caroline travel in week {i % 12}?").answer

        first = map_ordered(ask, range(48), workers=8)  # 12 prompts, each asked 4 times
        again = map_ordered(ask, range(48), workers=8)
    assert first == again and all(first)
    assert opened and set(opened) == {"memopt-cache_0"}  # no connection per worker thread
    assert len(opened) <= 16  # one per shard at most
