"""Calls started ahead (issue 26): a chain's independent calls start early where the harness runs work
concurrently, with the same requests, the same replies and the same trace as a serial run."""

from __future__ import annotations

import contextlib
import threading

import dspy
import pytest

from memopt.core.parallel import ahead, allow_ahead
from memopt.data.synth import SynthSpec, synthetic_conversations
from memopt.lm.build import make_lm
from memopt.lm.pool import LMSlots
from memopt.simlm import SimServer
from memopt.systems import clear_ingest_cache, make_system
from memopt.trace import trace


def test_ahead_starts_calls_at_once_only_where_allowed():
    barrier, order = threading.Barrier(4, timeout=10), []

    def call(i: int) -> int:
        barrier.wait()  # returns only when four calls run at once
        return i

    with allow_ahead(4), ahead() as start:
        later = [start(lambda i=i: call(i)) for i in range(4)]
        assert [f() for f in later] == [0, 1, 2, 3]

    def logged(i: int) -> int:
        order.append(i)
        return i

    with ahead() as start:  # not allowed here: each call runs when its result is taken
        later = [start(lambda i=i: logged(i)) for i in range(3)]
        assert order == []
        assert [later[2](), later[0](), later[2]()] == [2, 0, 2] and order == [2, 0]
    with allow_ahead(4), ahead(enabled=False) as start:
        later = start(lambda: logged(9))
        assert order == [2, 0]
        assert later() == 9


def test_leaving_ahead_cancels_calls_not_started_and_waits_for_running_ones():
    gate, ran = threading.Event(), []

    def call(i: int) -> int:
        gate.wait(timeout=10)
        ran.append(i)
        return i

    with pytest.raises(RuntimeError, match="chain broke"), allow_ahead(2), ahead() as start:
        [start(lambda i=i: call(i)) for i in range(6)]
        gate.set()
        raise RuntimeError("chain broke")
    assert sorted(ran) == [0, 1]  # the two running ended before the block was left; the other four never started


@pytest.fixture(scope="module")
def conversation():
    return synthetic_conversations(SynthSpec(conversations=1, sessions=4, seed=2))[0]


def _run(pipeline: str, url: str, conversation, workers: int, traced: bool):
    """Ingest and answer one conversation over HTTP with ``workers`` calls allowed ahead; its answers, its graph
    (or None) and the most LM calls in flight while ingesting."""
    clear_ingest_cache()  # each run builds its memory
    slots = LMSlots(8)
    system = make_system(pipeline)
    lm = make_lm(f"openai/gpt-4.1-mini@{url}", callbacks=[slots])
    with dspy.context(lm=lm), (trace(system) if traced else contextlib.nullcontext()) as tracer, allow_ahead(workers):
        system.ingest(conversation)
        peak = slots.peak
        answers = [system.answer_case(c).answer for c in conversation.cases[:6]]
        if tracer is not None:
            tracer.record_cases(conversation.cases[:6])
    return answers, tracer.graph if tracer is not None else None, peak


_WALL_CLOCK = {"started_at", "seconds", "time", "created"}  # when things ran, which concurrency changes


def _content(G):
    nodes = {n: {k: v for k, v in d.items() if k not in _WALL_CLOCK} for n, d in G.nodes(data=True)}
    return nodes, sorted((u, v, d.get("rel")) for u, v, d in G.edges(data=True)), \
        {k: v for k, v in G.graph.items() if k not in _WALL_CLOCK}


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
@pytest.mark.parametrize("pipeline", ["mem0", "evermemos"])
def test_independent_ingest_calls_start_ahead_with_the_same_requests_replies_and_trace(conversation, pipeline,
                                                                                        traced):
    """Mem0's extractions, EverMemOS's segmentations and per-MemCell episode and fact calls."""
    with SimServer(delay=0.03) as server:
        serial = _run(pipeline, server.url, conversation, 1, traced)
        asked = server.stats.requests
        early = _run(pipeline, server.url, conversation, 8, traced)
        assert server.stats.requests == 2 * asked  # the same number of requests (no reply cache here)
    assert serial[2] == 1  # one call at a time, in the chain's order
    assert early[2] > 1  # later sessions' extractions in flight while the chain runs
    assert early[0] == serial[0]
    if traced:
        assert _content(early[1]) == _content(serial[1])  # the same graph, logical clock and all
