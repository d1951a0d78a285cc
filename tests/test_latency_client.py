"""Client CPU per LM call (issue 26): work memopt's worker threads would otherwise redo on every call."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from memopt.parallel import map_ordered
from memopt.simlm import SimServer


def test_each_worker_thread_keeps_one_event_loop_closed_with_the_pool():
    barrier = threading.Barrier(3)

    def loop_of(i: int) -> tuple[int, asyncio.AbstractEventLoop]:
        if i < 3:
            barrier.wait(timeout=10)  # three tasks at once: three threads
        return threading.get_ident(), asyncio.get_event_loop()

    seen = map_ordered(loop_of, range(12), workers=3)
    per_thread: dict[int, set[int]] = {}
    for ident, loop in seen:
        per_thread.setdefault(ident, set()).add(id(loop))
    assert len(per_thread) == 3
    assert all(len(loops) == 1 for loops in per_thread.values())
    assert all(loop.is_closed() for _, loop in seen)


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
