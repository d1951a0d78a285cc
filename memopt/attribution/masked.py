"""Masked faults: a second fault at the answer op, hidden behind the first.

An attribution names the *earliest* decisive fault. When it is upstream (an extraction, an update,
a retrieval), the answer op never saw the information, so nothing in the run shows whether it would
have answered right with it: a fault of its own (a list answered in part, a relative date left in
the answer) stays hidden until the upstream one is fixed, rounds later.

`masked_fault` asks the executable graph: the case's context op is given the evidence turns in
front of what it returned (`memopt.attribution.counterfactual.correction` shapes them as that op's
output), the question is replayed (`memopt.trace.replay`; everything upstream is served from the
recorded run, only the answer op runs again: one task LM call), and the judge grades the new answer
(one judge call). When the answer is still wrong, the answer op is blamed as well, with a
``ResponseError`` on the replayed case: its context holds the evidence, so its feedback shows what
the op did with it. ``details["masked_by"]`` names the first fault's op.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from memopt.attribution.case import FailedCase, pseudo_discount
from memopt.attribution.types import Attribution
from memopt.judge import Judge

__all__ = ["masked_fault", "MaskedFault"]

MaskedFault = tuple[FailedCase, Attribution] | None  # the replayed case and the answer op's blame, or none found


def _oracle_context(case: FailedCase) -> Any:
    """The context op's recorded output with the evidence turns put first (None when it cannot take them)."""
    from memopt.attribution.counterfactual import with_units

    op = case.context_op
    if op is None or not case.evidence_turns:
        return None
    return with_units(case.G, case.G.nodes[op].get("output"), case.evidence_turns)


def masked_fault(case: FailedCase, attribution: Attribution, judge: Judge, *, lm: Any = None) -> MaskedFault:
    """The answer op's own fault behind an upstream ``attribution`` (see the module docstring): the replayed case
    and its ``ResponseError``, or None when the answer op answers right given the evidence (or it was already
    blamed, or the question is unanswerable, or the context cannot be corrected). ``lm`` runs the answer op again
    (the caller's task LM, so its call is counted); without it, the graph's recorded LM spec."""
    from memopt.trace.replay import replay

    if case.G.graph.get("source"):  # a graph recorded from a real system (`memopt attach`): memopt cannot replay it
        return None
    if case.unanswerable or attribution.op_id == case.answer_op or case.context_op is None:
        return None
    fixed = _oracle_context(case)
    if fixed is None:
        return None
    started = time.perf_counter()
    result = replay(case.G, {case.context_op: fixed}, cases=[case.key], lm=lm)
    answer = result.answers[case.key]
    if judge.correct(case.question, case.gold, answer):
        return None
    again = replace(case, G=result.graph, prediction=answer)
    blamed = Attribution(
        case.case_id, "ResponseError", again.answer_op, again.G.nodes[again.answer_op]["operation"],
        tuple(p for p in (*case.evidence_turns[:1], again.context_var, again.answer_op, again.answer_var) if p),
        f"masked by {attribution.op_id}: with the evidence turns put into its context, the answer op still answered "
        "wrong", pseudo_discount(case, 0.8), 1, None, attribution.method, time.perf_counter() - started,
        {"masked_by": attribution.op_id, "replayed_lm_calls": result.lm_calls})
    return again, blamed
