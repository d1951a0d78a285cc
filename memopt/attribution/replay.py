"""Attribution that pays for itself: a stratified sample of the failures, and replay of unchanged cases.

An optimizer round attributes its failed training cases. Two things keep that from costing a judge
call per step per failure every round:

- **Replay** (`AttributionCache`): a case's attribution is reused when the case is byte-identical to
  one attributed before (`case_fingerprint`: its question, gold, prediction and evidence, and every op
  of its conversation's graph it could read: the conversation's ingest ops and the case's own query
  ops, each with its prompt version, inputs, output and logical time, and the variables they wrote).
  A rejected round leaves the prompts as they were, so the next round's cases are the same and cost
  no attribution judge call.
- **Sampling** (`stratified_sample`): at most ``size`` new cases are attributed per round, a stratified
  sample: a stratum is (question category, blamed-op candidate: the op the case was blamed on when it
  was last attributed, or ``"new"``); every stratum gets at least one case and the rest goes in
  proportion to the strata's sizes, so the blame counts stay representative while rare categories are
  still seen. Within a stratum, cases are taken evenly spaced through the (conversation-ordered) list,
  so the sample spans conversations. Replayed cases are free and always kept.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from memopt.attribution.case import FailedCase
from memopt.attribution.masked import MaskedFault
from memopt.attribution.types import Attribution

__all__ = ["case_fingerprint", "fingerprints", "stratified_sample", "AttributionCache", "NEW"]

NEW = "new"
_OP_FIELDS = ("operation", "prompt_version", "inputs", "output", "start", "end", "error", "overridden", "searched")
_VAR_FIELDS = ("kind", "value", "created", "derived_from", "action", "deleted", "sources", "session_date")


def _digest(payload: Any) -> str:
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _node_digests(G: nx.DiGraph) -> dict[str, str]:
    """Each node's digest: what it did or held, and what it read and wrote."""
    out = {}
    for node, d in G.nodes(data=True):
        keys = _OP_FIELDS if d.get("type") == "op" else _VAR_FIELDS
        out[node] = _digest([node, d.get("type"), {k: d.get(k) for k in keys}, sorted(G.predecessors(node)),
                             sorted(G.successors(node))])
    return out


def _query_keys(G: nx.DiGraph) -> set[str]:
    return {str(c.get("key")) for c in G.graph.get("cases") or [] if c.get("key")}


def _belongs_to(node: str, keys: set[str]) -> str | None:
    """The question key a node is query-time for (``answer:conv-30:q12@1`` → ``q12``), else None."""
    name = node.split("@", 1)[0]
    last = name.rsplit(":", 1)[-1]
    return last if last in keys else None


def fingerprints(cases: Sequence[FailedCase], *, method: str = "", verify: bool = False) -> dict[str, str]:
    """`case_fingerprint` of each case (by case id), each graph's nodes digested once."""
    digests: dict[int, dict[str, str]] = {}
    out = {}
    for case in cases:
        if id(case.G) not in digests:
            digests[id(case.G)] = _node_digests(case.G)
        out[case.case_id] = case_fingerprint(case, method=method, verify=verify, digests=digests[id(case.G)])
    return out


def case_fingerprint(case: FailedCase, *, method: str = "", verify: bool = False,
                     digests: dict[str, str] | None = None) -> str:
    """A digest of everything an attribution of ``case`` can read: equal digests mean byte-identical cases
    (``digests``: its graph's node digests, when already computed)."""
    G = case.G
    keys = _query_keys(G)
    digests = digests if digests is not None else _node_digests(G)
    mine = [digests[n] for n in sorted(G.nodes) if _belongs_to(n, keys) in (None, case.key)]
    head = [method, verify, case.case_id, case.question, case.gold, case.prediction, list(case.evidence),
            case.category, case.pseudo_evidence, G.graph.get("pipeline"), G.graph.get("knobs"),
            G.graph.get("prompt_versions")]
    return _digest([head, mine])


def stratified_sample(cases: Sequence[FailedCase], size: int | None,
                      candidate: Callable[[FailedCase], str]) -> list[FailedCase]:
    """At most ``size`` cases (every case when None), allocated to the strata (category, ``candidate(case)``) in
    proportion to their sizes, at least one each (largest remainders first), evenly spaced within a stratum, in
    the input order."""
    if size is None or size >= len(cases):
        return list(cases)
    strata: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i, case in enumerate(cases):
        strata[(case.category, candidate(case))].append(i)
    if size <= len(strata):  # fewer places than strata: one case of each of the largest strata
        ranked = sorted(strata.values(), key=lambda members: (-len(members), members[0]))[:size]
        return [cases[i] for i in sorted(members[0] for members in ranked)]
    share = {key: 1 + (size - len(strata)) * (len(m) - 1) / (len(cases) - len(strata)) for key, m in strata.items()}
    quota = {key: min(int(q), len(strata[key])) for key, q in share.items()}
    for key in sorted(share, key=lambda k: (int(share[k]) - share[k], strata[k][0])):  # largest remainders
        if sum(quota.values()) >= size:
            break
        quota[key] = min(quota[key] + 1, len(strata[key]))
    kept = {m[(j * len(m)) // quota[key]] for key, m in strata.items() for j in range(quota[key])}
    return [case for i, case in enumerate(cases) if i in kept]


@dataclass
class AttributionCache:
    """Attributions by case fingerprint (replay), and the op each case id was last blamed on (its stratum)."""

    by_fingerprint: dict[str, Attribution] = field(default_factory=dict)
    last_op: dict[str, str] = field(default_factory=dict)
    masked: dict[str, MaskedFault] = field(default_factory=dict)

    def get(self, fingerprint: str) -> Attribution | None:
        """The attribution of a byte-identical case attributed before, or None."""
        return self.by_fingerprint.get(fingerprint)

    def behind(self, fingerprint: str) -> MaskedFault:
        """The masked fault found behind the attribution of a byte-identical case, or None."""
        return self.masked.get(fingerprint)

    def put(self, fingerprint: str | None, attribution: Attribution, behind: MaskedFault = None) -> None:
        """Remember an attribution (and the masked fault behind it) for replay, when it has a fingerprint, and its
        case's blamed op (always)."""
        if fingerprint is not None:
            self.by_fingerprint[fingerprint] = attribution
            self.masked[fingerprint] = behind
        self.last_op[attribution.case_id] = attribution.operation

    def candidate(self, case: FailedCase) -> str:
        """The case's blamed-op candidate: the op it was last blamed on, or `NEW`."""
        return self.last_op.get(case.case_id, NEW)

    def to_dict(self) -> dict[str, Any]:
        """JSON form, for an optimizer's checkpoint: the attributions, the blamed ops, and each masked fault with
        its replayed case (each replayed graph once)."""
        from memopt.trace.io import graph_to_json

        graphs: dict[int, str] = {}
        stored: dict[str, Any] = {}
        masked: dict[str, Any] = {}
        for fingerprint, fault in self.masked.items():
            if fault is None:
                masked[fingerprint] = None
                continue
            case, attribution = fault
            key = graphs.setdefault(id(case.G), str(len(graphs)))
            if key not in stored:
                stored[key] = graph_to_json(case.G)
            masked[fingerprint] = {"case": {"graph": key, "case_id": case.case_id, "question": case.question,
                                            "gold": case.gold, "evidence": list(case.evidence),
                                            "prediction": case.prediction, "category": case.category,
                                            "pseudo_evidence": case.pseudo_evidence},
                                   "attribution": attribution.to_dict()}
        return {"by_fingerprint": {fp: a.to_dict() for fp, a in self.by_fingerprint.items()},
                "last_op": dict(self.last_op), "masked": masked, "graphs": stored}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> AttributionCache:
        """Read `to_dict`'s form back."""
        from memopt.trace.io import graph_from_json

        graphs = {key: graph_from_json(data, source="the checkpoint's attribution cache")
                  for key, data in (raw.get("graphs") or {}).items()}
        masked: dict[str, MaskedFault] = {}
        for fingerprint, fault in (raw.get("masked") or {}).items():
            if fault is None:
                masked[fingerprint] = None
                continue
            case = dict(fault["case"])
            G = graphs[case.pop("graph")]
            masked[fingerprint] = (FailedCase(G, **{**case, "evidence": tuple(case["evidence"])}),
                                   Attribution.from_dict(fault["attribution"]))
        return cls({fp: Attribution.from_dict(a) for fp, a in (raw.get("by_fingerprint") or {}).items()},
                   dict(raw.get("last_op") or {}), masked)
