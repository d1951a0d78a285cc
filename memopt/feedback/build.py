"""Feedback: what the reflection LM is told about one operation, in five kinds (registered by name in
`memopt.feedback.kinds`, where a plug-in adds its own).

- ``attribution`` (memopt's, `build_feedback`): attributions grouped by operation. For each blamed
  operation: how many failures of each error type, the prompt version they came from, and 2–5
  concrete examples — failures whose trace shows what was lost first, chosen to cover its error types
  and question categories — the question, the
  gold answer, what the system answered, the evidence excerpt, what the operation produced (or, for
  the answer op, the context items it read; for a retrieval miss, the unit the store held and what
  was retrieved), and an observation of what was lost or wrong (derived from the graph: a relative
  date left unresolved, a speaker no output mentions, a detail missing, a memory overwritten or
  deleted, a unit the context missed, the items of a list answer left out; a relative date only
  where the op's output kept it).
- ``outcome`` (`outcome_feedback`): per failed training case, the question, gold answer,
  prediction and F1 / judge verdict, with no attribution: what a GEPA user writes.
- ``score`` (`score_feedback`): the training score only.
- ``empty`` (`empty_feedback`): nothing.
- ``misleading`` (`misleading_feedback`): the head of the attribution feedback, but examples taken
  from failures blamed on *other* operations, and advice that contradicts them
  (`MISLEADING_ADVICE`): a control that must not help.
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
from memopt.core.text import answer_items, find_relative_dates, has_absolute_date, overlap, stem_set
from memopt.trace.graph import op_stages

__all__ = ["Feedback", "build_feedback", "outcome_feedback", "score_feedback", "empty_feedback",
           "misleading_feedback", "MAX_EXAMPLES", "MISLEADING_ADVICE"]

MAX_EXAMPLES = 5
MISLEADING_ADVICE: dict[str, str] = {  # by the stage of the operation it is given to
    "extraction": "Facts should be short; drop names, numbers, places and dates.",
    "update": "When a new fact is about the same topic as a stored memory, replace that memory.",
    "deletion": "When something is no longer true, delete every memory about that person and topic.",
    "retrieval": "Use the question itself as the search query, word for word.",
    "response": "Answer from the single best matching memory only.",
}
_DEFAULT_ADVICE = "Outputs should be as short as possible; leave out names, numbers and places."


@dataclass
class Feedback:
    """What the proposer is told about one operation (``kind``: a feedback kind, `memopt.feedback.kinds`)."""

    operation: str
    prompt_version: str | None
    counts: dict[str, int]
    examples: list[str] = field(default_factory=list)
    kind: str = "attribution"
    advice: list[str] = field(default_factory=list)
    failed: int = 0
    explained: int = 0  # failures blamed on it whose trace shows what was lost (attribution kind)

    @property
    def n(self) -> int:
        """Failures blamed on this operation."""
        return sum(self.counts.values())

    def text(self) -> str:
        """The feedback as plain text (what the reflection LM reads)."""
        if self.kind == "empty":
            return ""
        if self.kind == "score":
            return "\n".join(self.examples)
        numbered = [f"Example {i}:\n{e}" for i, e in enumerate(self.examples, start=1)]
        if self.kind == "outcome":
            head = f"{self.failed} training questions were answered wrong; some of them:"
            return "\n\n".join([head, *numbered])
        counts = ", ".join(f"{error} × {n}" for error, n in self.counts.items())
        head = (f"{self.n} failed answers were blamed on this operation ({counts}), "
                f"with prompt version {self.prompt_version or 'unknown'}.")
        return "\n\n".join([head, *numbered, *([" ".join(self.advice)] if self.advice else [])])

    def summary(self) -> str:
        """One line for commit messages and tables."""
        if self.kind != "attribution":
            return f"{self.operation}: {self.kind} feedback"
        return f"{self.operation}: " + ", ".join(f"{error} × {n}" for error, n in self.counts.items())


def _outputs(G: nx.DiGraph, op: str, near: str = "") -> list[str]:
    """What an op produced (at most six items), those sharing most words with ``near`` first."""
    output = G.nodes[op].get("output")
    if isinstance(output, dict):
        values = [v for key, v in output.items() if key != "memory"]
        flat = [text_of(x) for v in values for x in (v if isinstance(v, list) else [v])]
        target = stem_set(near)
        return sorted(flat, key=lambda item: -overlap(target, item))[:6] if near else flat[:6]
    return [text_of(output)[:300]] if output is not None else []


def _observation(case: FailedCase, attribution: Attribution, *, precise: bool = True) -> str:
    """What the example shows was lost or wrong (`_losses`), else the attribution's reason."""
    return " ".join(_losses(case, attribution, precise=precise)) or attribution.reason


def _losses(case: FailedCase, attribution: Attribution, *, precise: bool = True) -> list[str]:
    """What the graph shows was lost or wrong in this failure, one sentence each (none when it shows nothing more
    than the attribution's reason). ``precise`` (memopt's feedback) says an answer gave part of a list only when it
    holds some but not all of the gold's items, and names them; without it (the misleading control, as measured
    before), whenever the gold has a comma."""
    G = case.G
    evidence = " ".join(case.evidence_texts)
    notes = []
    relative = find_relative_dates(evidence)
    if relative and has_absolute_date(case.gold) and (not precise or _kept_relative(case, attribution)):
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
    elif precise:
        notes += _partial(case.gold, case.prediction)
    elif "," in case.gold:
        notes.append("The gold answer lists several items; the response gave only part of them.")
    return notes


def _kept_relative(case: FailedCase, attribution: Attribution) -> bool:
    """Whether what the blamed op wrote still holds a relative date: the answer (for the answer op), the facts about
    the evidence (for an extraction); other ops are not checked."""
    G = case.G
    if G.has_node(attribution.op_id) and "response" in op_stages(G, attribution.op_id):
        return bool(find_relative_dates(case.prediction))
    if attribution.error_type == "ExtractionError":
        return bool(find_relative_dates(" ".join(_outputs(G, attribution.op_id, " ".join(case.evidence_texts))[:4])))
    return True


def _partial(gold: str, prediction: str) -> list[str]:
    """The observation that an answer gave some, not all, of the gold's items (none when it gave all or none)."""
    items = answer_items(gold)
    given = [item for item in items if overlap(item, prediction) >= 0.5]
    if len(items) < 2 or not given or len(given) == len(items):
        return []
    left = [item for item in items if item not in given]
    return [f"The gold answer lists {len(items)} items; the response gave only {', '.join(given)} and left out "
            f"{', '.join(left)}."]


def _lines(value: Any) -> list[str]:
    return [" ".join(line.split()) for line in text_of(value).splitlines() if line.strip()]


def _read_by_answer(case: FailedCase) -> list[str]:
    """The context items the answer op read that are closest to the question and gold (at most three)."""
    if case.context_var is None:
        return []
    target = stem_set(f"{case.question} {case.gold}")
    lines = _lines(case.G.nodes[case.context_var].get("value"))
    return sorted(lines, key=lambda line: -overlap(target, line))[:3]


def _example(case: FailedCase, attribution: Attribution, *, precise: bool = True) -> str:
    lines = [f"Question: {case.question}", f"Gold answer: {case.gold}", f"System answered: {case.prediction}",
             f"Error: {attribution.error_type} — {attribution.reason}"]
    if case.evidence_texts:
        lines.append("Evidence: " + " / ".join(t[:240] for t in case.evidence_texts[:2]))
    if attribution.error_type == "RetrievalError":
        held = [n for n in attribution.evidence_path if case.G.has_node(n) and "action" in case.G.nodes[n]]
        if held:
            lines.append("The store held: " + " / ".join(_lines(case.G.nodes[held[0]]["value"]))[:300])
        lines.append("The retrieved context was: " + " | ".join(p[:160] for p in _read_by_answer(case)))
    elif case.G.has_node(attribution.op_id) and "response" in op_stages(case.G, attribution.op_id):
        read = _read_by_answer(case)
        if read:
            lines.append("This operation read: " + " | ".join(p[:160] for p in read))
    else:
        produced = _outputs(case.G, attribution.op_id, " ".join(case.evidence_texts))
        if produced:
            lines.append("This operation produced: " + " | ".join(p[:160] for p in produced[:4]))
    lines.append("Observation: " + _observation(case, attribution, precise=precise))
    return "\n".join(lines)


def _grouped(blamed: list[tuple[FailedCase, Attribution]], prompt_ops: Mapping[str, Sequence[str]] | None
             ) -> dict[str, list[tuple[FailedCase, Attribution]]]:
    grouped: dict[str, list[tuple[FailedCase, Attribution]]] = defaultdict(list)
    for case, attribution in blamed:
        targets = (attribution.operation,) if prompt_ops is None else prompt_ops.get(attribution.operation, ())
        for op in targets:
            grouped[op].append((case, attribution))
    return dict(sorted(grouped.items(), key=lambda kv: -len(kv[1])))


def _pick(items: list[tuple[FailedCase, Attribution]], explained: set[str] | None = None
          ) -> list[tuple[FailedCase, Attribution]]:
    """Up to `MAX_EXAMPLES` examples that cover the failure categories: first, greedily, examples that add an error
    type or a question category not shown yet; then round-robin over error types. Distinct failures (another
    question and another evidence turn) come first. With ``explained`` (the ids of the cases whose trace shows what
    was lost, `_losses`), those are chosen before the others, so the examples show what a rewrite could fix."""
    picked, repeats, seen = [], [], set()
    for case, attribution in sorted(items, key=lambda ca: (ca[1].error_type, ca[0].case_id)):
        if (attribution.error_type, case.question) in seen:
            continue
        seen.add((attribution.error_type, case.question))
        shown = (attribution.error_type, tuple(case.evidence_texts))
        (repeats if shown in seen else picked).append((case, attribution))
        seen.add(shown)
    pool = picked + repeats
    if explained is None:
        return _cover(pool, MAX_EXAMPLES, set())
    out = _cover([item for item in pool if item[0].case_id in explained], MAX_EXAMPLES, set())
    covered = set().union(*map(_labels, out)) if out else set()
    return out + _cover([item for item in pool if item[0].case_id not in explained], MAX_EXAMPLES - len(out), covered)


def _cover(pool: list[tuple[FailedCase, Attribution]], k: int, covered: set[tuple[str, Any]]
           ) -> list[tuple[FailedCase, Attribution]]:
    """Up to ``k`` of ``pool``: greedily those adding a category not in ``covered``, then round-robin over error
    types."""
    pool, out, covered = list(pool), [], set(covered)
    while pool and len(out) < k:
        gains = [len(_labels(item) - covered) for item in pool]
        if max(gains) == 0:
            break
        best = pool.pop(gains.index(max(gains)))
        out.append(best)
        covered |= _labels(best)
    return out + _spread(pool, k - len(out))


def _labels(item: tuple[FailedCase, Attribution]) -> set[tuple[str, Any]]:
    """The failure categories one example shows: its error type and its question category."""
    return {("error", item[1].error_type), ("category", item[0].category)}


def _version(items: list[tuple[FailedCase, Attribution]]) -> str | None:
    case, attribution = items[0]
    return attribution.details.get("prompt_version") or case.G.nodes[attribution.op_id].get("prompt_version")


def build_feedback(blamed: list[tuple[FailedCase, Attribution]],
                   prompt_ops: Mapping[str, Sequence[str]] | None = None) -> dict[str, Feedback]:
    """Feedback per LLM operation from (case, attribution) pairs; ``prompt_ops`` maps each blamed op to the LLM
    ops whose prompts steer it (`MemorySystem.prompt_ops`: itself for an LLM op, e.g. rewrite_query for
    retrieve, none for an op only knobs steer); without it, each blamed op is its own."""
    out = {}
    for op, items in _grouped(blamed, prompt_ops).items():
        counts = dict(Counter(a.error_type for _, a in items).most_common())
        explained = {c.case_id for c, a in items if _losses(c, a)}
        out[op] = Feedback(op, _version(items), counts, [_example(c, a) for c, a in _pick(items, explained)],
                           explained=len(explained))
    return out


def misleading_feedback(blamed: list[tuple[FailedCase, Attribution]],
                        prompt_ops: Mapping[str, Sequence[str]] | None = None) -> dict[str, Feedback]:
    """The misleading control: the same operations and head as `build_feedback`, but examples of failures
    blamed on other operations, and advice that contradicts what they show (`MISLEADING_ADVICE`)."""
    grouped = _grouped(blamed, prompt_ops)
    out = {}
    for op, items in grouped.items():
        counts = dict(Counter(a.error_type for _, a in items).most_common())
        others = [pair for other, pairs in grouped.items() if other != op for pair in pairs]
        out[op] = Feedback(op, _version(items), counts, [_example(c, a, precise=False) for c, a in _pick(others)],
                           kind="misleading", advice=[_advice(op, items)])
    return out


def _advice(op: str, items: list[tuple[FailedCase, Attribution]]) -> str:
    """The misleading advice for an LLM op: by the first stage its system declares (`MISLEADING_ADVICE`)."""
    spec = (items[0][0].G.graph.get("operations") or {}).get(op) or {}
    stages = spec.get("stages") or ()
    return MISLEADING_ADVICE.get(stages[0], _DEFAULT_ADVICE) if stages else _DEFAULT_ADVICE


def outcome_feedback(operation: str, results: list[Any], prompt_version: str | None, *, offset: int = 0
                     ) -> Feedback:
    """The outcome control: question, gold, prediction and score of up to `MAX_EXAMPLES` failed cases
    (no attribution), spread over question categories; ``offset`` rotates which failures are shown."""
    failed = sorted((r for r in results if r.correct is False or (r.correct is None and r.f1 < 0.5)),
                    key=lambda r: r.case_id)
    by_category: dict[int, list[Any]] = defaultdict(list)
    for r in failed:
        by_category[r.category].append(r)
    order = [bucket[(offset + i) % len(bucket)] for i in range(max(map(len, by_category.values()), default=0))
             for bucket in by_category.values() if i < len(bucket)]
    examples = [f"Question: {r.question}\nGold answer: {r.gold}\nPrediction: {r.prediction}\n"
                f"Score: F1 {r.f1:.2f}, judged {'wrong' if r.correct is False else 'unknown'}"
                for r in order[:MAX_EXAMPLES]]
    return Feedback(operation, prompt_version, {}, examples, kind="outcome", failed=len(failed))


def empty_feedback(operation: str, prompt_version: str | None) -> Feedback:
    """The empty control: the reflection LM is told nothing."""
    return Feedback(operation, prompt_version, {}, [], kind="empty")


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
    return Feedback(operation, prompt_version, {}, [text], kind="score")
