"""Masked faults: a second fault at the answer op, hidden behind the first.

An attribution names the *earliest* decisive fault. When it is upstream (an extraction, an update,
a retrieval), the answer op never saw the information, so nothing in the run shows whether it would
have answered right with it: a fault of its own (a list answered in part, a relative date left in
the answer) stays hidden until the upstream one is fixed, rounds later.

`masked_faults` asks the executable graph: the case's context op is given the evidence turns in
front of what it returned (`memopt.attribution.counterfactual.with_units` shapes them as that op's
output), the question is replayed (`memopt.trace.replay`, once per conversation graph for all its
probed failures; everything upstream is served from the recorded run, only the answer op runs again:
one task LM call per failure), and the judge grades the new answer (one judge call). When the answer
is still wrong, the answer op is blamed as well, with a ``ResponseError`` on the replayed case: its
context holds the evidence, so its feedback shows what the op did with it. ``details["masked_by"]``
names the first fault's op.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from memopt.attribution.case import FailedCase, pseudo_discount
from memopt.attribution.types import Attribution
from memopt.core.errors import one_line
from memopt.core.parallel import map_ordered
from memopt.judge.judges import Judge

__all__ = ["masked_fault", "masked_faults", "MaskedFault"]

MaskedFault = tuple[FailedCase, Attribution] | None  # the replayed case and the answer op's blame, or none found

logger = logging.getLogger(__name__)


def _oracle_context(case: FailedCase) -> Any:
    """The context op's recorded output with the evidence turns put first (None when it cannot take them)."""
    from memopt.attribution.counterfactual import with_units

    op = case.context_op
    if op is None or not case.evidence_turns:
        return None
    return with_units(case.G, case.G.nodes[op].get("output"), case.evidence_turns)


def _probed(case: FailedCase, attribution: Attribution) -> Any:
    """The oracle context to replay ``case`` with, or None when there is nothing to probe: the answer op is already
    blamed, the question is unanswerable, the context cannot be corrected, or the graph was recorded from a real
    system (`memopt attach`; memopt cannot replay that system)."""
    if case.G.graph.get("source") or case.unanswerable or attribution.op_id == case.answer_op:
        return None
    return _oracle_context(case)


def masked_faults(blamed: Sequence[tuple[FailedCase, Attribution]], judge: Judge, *, lm: Any = None,
                  workers: int = 1, before: Callable[[], None] | None = None
                  ) -> dict[str, tuple[FailedCase, Attribution]]:
    """The answer op's own faults behind upstream attributions (see the module docstring), by case id: one replay per
    conversation graph for all its probed cases (their context ops each get the evidence; the ingest is served from
    the recorded run once), one judge call per case. ``lm`` runs the answer ops again (the caller's task LM, so the
    calls are counted); without it, the graph's recorded LM spec. Conversations are replayed ``workers`` at a time,
    each after ``before()`` (an optimizer's budget check, which may raise). A replay that fails is logged as a
    warning and its conversation's failures keep their first faults."""
    groups: dict[int, list[tuple[FailedCase, Attribution, Any]]] = {}
    for case, attribution in blamed:
        fixed = _probed(case, attribution)
        if fixed is not None:
            groups.setdefault(id(case.G), []).append((case, attribution, fixed))

    def one(group: list[tuple[FailedCase, Attribution, Any]]) -> dict[str, tuple[FailedCase, Attribution]]:
        if before is not None:
            before()
        try:
            return _replayed(group, judge, lm)
        except Exception as e:  # a replay or a judge call that failed: these failures keep their first faults
            logger.warning("the replay of %s with the evidence in its context failed (%s); its failures keep their "
                           "first faults", group[0][0].G.graph.get("conversation"), one_line(e))
            return {}

    return {k: v for found in map_ordered(one, list(groups.values()), workers=workers) for k, v in found.items()}


def _replayed(group: list[tuple[FailedCase, Attribution, Any]], judge: Judge, lm: Any
              ) -> dict[str, tuple[FailedCase, Attribution]]:
    """The faults behind the first of one conversation's probed failures, from one replay."""
    from memopt.trace.replay import replay

    started = time.perf_counter()
    G = group[0][0].G
    result = replay(G, {case.context_op: fixed for case, _, fixed in group}, cases=[c.key for c, _, _ in group], lm=lm)
    seconds = (time.perf_counter() - started) / len(group)
    out = {}
    for case, attribution, _ in group:
        answer = result.answers[case.key]
        if judge.correct(case.question, case.gold, answer):
            continue
        again = replace(case, G=result.graph, prediction=answer)
        out[case.case_id] = again, Attribution(
            case.case_id, "ResponseError", again.answer_op, again.G.nodes[again.answer_op]["operation"],
            tuple(p for p in (*case.evidence_turns[:1], again.context_var, again.answer_op, again.answer_var) if p),
            f"masked by {attribution.op_id}: with the evidence turns put into its context, the answer op still "
            "answered wrong", pseudo_discount(case, 0.8), 1, None, attribution.method, seconds,
            {"masked_by": attribution.op_id})
    return out


def masked_fault(case: FailedCase, attribution: Attribution, judge: Judge, *, lm: Any = None) -> MaskedFault:
    """`masked_faults` for one failure: the replayed case and the answer op's ``ResponseError``, or None when the
    answer op answers right given the evidence (or there was nothing to probe)."""
    return masked_faults([(case, attribution)], judge, lm=lm).get(case.case_id)
