"""Feedback: attributions grouped by operation, turned into text a proposer can act on.

For each blamed operation: how many failures of each error type, the prompt version they came
from, and 2–5 concrete examples — the question, the gold answer, what the system answered, the
evidence excerpt, what the operation produced, and an observation of what was lost or wrong
(derived from the graph: a relative date left unresolved, a speaker no output mentions, a detail
missing, a memory overwritten or deleted, a unit the context missed). `score_feedback` is the
ablation: only the score, no attribution.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from memopt.attribution.case import FailedCase, text_of
from memopt.attribution.types import Attribution
from memopt.text import find_relative_dates, has_absolute_date
from memopt.trace.graph import op_stages

__all__ = ["Feedback", "build_feedback", "score_feedback", "MAX_EXAMPLES"]

MAX_EXAMPLES = 5


@dataclass
class Feedback:
    """What the proposer is told about one operation."""

    operation: str
    prompt_version: str | None
    counts: dict[str, int]
    examples: list[str] = field(default_factory=list)
    score_only: bool = False

    @property
    def n(self) -> int:
        """Failures blamed on this operation."""
        return sum(self.counts.values())

    def text(self) -> str:
        """The feedback as plain text (what the reflection LM reads)."""
        if self.score_only:
            return "\n".join(self.examples)
        counts = ", ".join(f"{error} × {n}" for error, n in self.counts.items())
        head = (f"{self.n} failed answers were blamed on this operation ({counts}), "
                f"with prompt version {self.prompt_version or 'unknown'}.")
        return "\n\n".join([head, *(f"Example {i}:\n{e}" for i, e in enumerate(self.examples, start=1))])

    def summary(self) -> str:
        """One line for commit messages and tables."""
        if self.score_only:
            return f"{self.operation}: score-only feedback"
        return f"{self.operation}: " + ", ".join(f"{error} × {n}" for error, n in self.counts.items())


def _outputs(G: nx.DiGraph, op: str) -> list[str]:
    output = G.nodes[op].get("output")
    if isinstance(output, dict):
        values = [v for key, v in output.items() if key != "memory"]
        flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
        return [text_of(x) for x in flat][:6]
    return [text_of(output)[:300]] if output is not None else []


def _observation(case: FailedCase, attribution: Attribution) -> str:
    G = case.G
    evidence = " ".join(case.evidence_texts)
    notes = []
    relative = find_relative_dates(evidence)
    if relative and has_absolute_date(case.gold):
        notes.append(f"The evidence says '{relative[0]}' (a relative date); the gold answer is the actual date.")
    if attribution.error_type == "ExtractionError":
        speakers = sorted({G.nodes[t]["value"]["speaker"] for t in case.evidence_turns})
        produced = " ".join(_outputs(G, attribution.op_id))
        for speaker in speakers:
            if speaker not in produced:
                notes.append(f"No fact produced from this conversation mentions {speaker}, who said it.")
        missing = [w for w in re.findall(r"[A-Z][\w'-]+|\d+", case.gold) if w in evidence and w not in produced]
        if missing:
            notes.append(f"The detail '{' '.join(missing)}' is in the evidence but was lost from the output.")
    elif attribution.error_type in ("UpdateError", "DeletionError"):
        lost = [n for n in attribution.evidence_path if G.has_node(n) and G.nodes[n].get("action")]
        if len(lost) >= 2:
            before, after = G.nodes[lost[0]]["value"], G.nodes[lost[-1]]["value"]
            verb = "deleted" if attribution.error_type == "DeletionError" else "overwritten by"
            target = "" if attribution.error_type == "DeletionError" else f" '{after}'"
            notes.append(f"The memory '{before}' was {verb}{target}, although the new fact did not contradict it.")
    elif attribution.error_type == "RetrievalError":
        notes.append("The store held the answer at question time, but the retrieved context missed it.")
    elif case.unanswerable:
        notes.append("Nothing in the conversation answers this; the answer should have been 'Not mentioned'.")
    elif "," in case.gold:
        notes.append("The gold answer lists several items; the response gave only part of them.")
    return " ".join(notes) or attribution.reason


def _example(case: FailedCase, attribution: Attribution) -> str:
    lines = [f"Question: {case.question}", f"Gold answer: {case.gold}", f"System answered: {case.prediction}",
             f"Error: {attribution.error_type} — {attribution.reason}"]
    if case.evidence_texts:
        lines.append("Evidence: " + " / ".join(t[:240] for t in case.evidence_texts[:2]))
    if case.G.has_node(attribution.op_id) and "response" not in op_stages(case.G, attribution.op_id):
        produced = _outputs(case.G, attribution.op_id)
        if produced:
            lines.append("This operation produced: " + " | ".join(p[:160] for p in produced[:4]))
    lines.append("Observation: " + _observation(case, attribution))
    return "\n".join(lines)


def build_feedback(blamed: list[tuple[FailedCase, Attribution]],
                   prompt_ops: Mapping[str, Sequence[str]] | None = None) -> dict[str, Feedback]:
    """Feedback per LLM operation from (case, attribution) pairs; ``prompt_ops`` maps each blamed op to the LLM
    ops whose prompts steer it (`MemorySystem.prompt_ops`: itself for an LLM op, e.g. rewrite_query for
    retrieve, none for an op only knobs steer); without it, each blamed op is its own."""
    grouped: dict[str, list[tuple[FailedCase, Attribution]]] = defaultdict(list)
    for case, attribution in blamed:
        targets = (attribution.operation,) if prompt_ops is None else prompt_ops.get(attribution.operation, ())
        for op in targets:
            grouped[op].append((case, attribution))
    out = {}
    for op, items in sorted(grouped.items(), key=lambda kv: -len(kv[1])):
        counts = dict(Counter(a.error_type for _, a in items).most_common())
        version = items[0][1].details.get("prompt_version") or items[0][0].G.nodes[items[0][1].op_id].get(
            "prompt_version")
        picked, seen = [], set()
        for case, attribution in sorted(items, key=lambda ca: (ca[1].error_type, ca[0].case_id)):
            if (attribution.error_type, case.question) in seen:
                continue
            seen.add((attribution.error_type, case.question))
            picked.append((case, attribution))
        examples = _spread(picked, MAX_EXAMPLES)
        out[op] = Feedback(op, version, counts, [_example(c, a) for c, a in examples])
    return out


def _spread(items: list[tuple[FailedCase, Attribution]], k: int) -> list[tuple[FailedCase, Attribution]]:
    """Up to ``k`` examples, round-robin over error types so every type is shown."""
    by_type: dict[str, list[tuple[FailedCase, Attribution]]] = defaultdict(list)
    for item in items:
        by_type[item[1].error_type].append(item)
    out: list[tuple[FailedCase, Attribution]] = []
    while len(out) < k and any(by_type.values()):
        for bucket in by_type.values():
            if bucket and len(out) < k:
                out.append(bucket.pop(0))
    return out


def score_feedback(operation: str, metrics: dict[str, Any], prompt_version: str | None) -> Feedback:
    """The score-only ablation: the training score and nothing else."""
    wrong = int(round((1 - (metrics.get("judge") or 0.0)) * metrics.get("n", 0)))
    text = (f"Average F1 {metrics.get('f1', 0.0):.3f} over {metrics.get('n', 0)} training questions; "
            f"{wrong} were judged wrong.")
    return Feedback(operation, prompt_version, {}, [text], score_only=True)
