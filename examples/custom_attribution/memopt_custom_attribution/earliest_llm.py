"""``earliest_llm``: blame the earliest LLM op on the evidence path, without a judge call.

The evidence path of a failed case is every op that lies between one of its evidence turns and its
answer in the graph (a descendant of the turn and an ancestor of the answer). This method blames the
earliest LLM op on it (the answer op when no other LLM op is), with the error type of that op's stages.
It is a deliberately simple heuristic, shown to make the plug-in contract concrete.
"""

from __future__ import annotations

import time

import networkx as nx

from memopt.attribution.case import FailedCase, pseudo_discount
from memopt.attribution.registry import attribution_method
from memopt.attribution.types import Attribution
from memopt.judge import Judge
from memopt.taxonomy import error_of_stages
from memopt.trace.graph import op_stages, ops_in_order


def _is_llm(G: nx.DiGraph, op: str) -> bool:
    spec = (G.graph.get("operations") or {}).get(G.nodes[op]["operation"]) or {}
    return spec.get("kind") == "llm"


@attribution_method("earliest_llm")
def earliest_llm(case: FailedCase, judge: Judge) -> Attribution:
    """The earliest LLM op between an evidence turn and the answer (else the answer op)."""
    started = time.perf_counter()
    G = case.G
    upstream = nx.ancestors(G, case.answer_var)
    on_path = {n for turn in case.evidence_turns for n in nx.descendants(G, turn) if n in upstream}
    llm_ops = [n for n in ops_in_order(G) if n in on_path and _is_llm(G, n)]
    op = llm_ops[0] if llm_ops else case.answer_op
    reason = "the earliest LLM op on the evidence path" if llm_ops else "no LLM op on the evidence path"
    return Attribution(case.case_id, error_of_stages(op_stages(G, op)), op, G.nodes[op]["operation"],
                       tuple(dict.fromkeys([*llm_ops, case.answer_op, case.answer_var])), reason,
                       pseudo_discount(case, 0.5), 0, None, "earliest_llm", time.perf_counter() - started)
