"""The question, answer, gold, verdict and context of a smartcomment graph, told by the shape of the question's chain
when no role word names them.

Teams name these variables in their own words and languages (a German household assistant's ``nutzerfrage`` →
``antwort`` → ``urteil``, a shop bot's ``bot_reply``, a help desk's ``draft_answer``); what the graph does with them
is the same in every team's trace:

* a **verdict** is a variable nothing reads whose value says right or wrong (``FAIL``, ``score=0``,
  ``{"urteil": "falsch"}``, a score from 0 to 1: `memopt.trace.verdicts.verdict_of`), written by an op that reads
  a variable an op wrote (the answer) and one no op wrote that is not a question (the gold it judged against),
  and is not the next version of a variable it read (``{"gone": true}`` of a retired episode);
* the **answer** is what that judge reads that an op wrote; the **gold** what it reads that no op wrote, whether or
  not the judge also reads the question;
* the **question** of an answer that descends from no question and is judged beside none is the newest variable
  among its ancestors that no op wrote: a question is asked after every turn of the conversation it asks about;
* the **context** is what the op that wrote the answer read that the question's own ops wrote (a hit list, a
  profile pasted into a prompt), when no role word named one; a memory unit the answer op reads is not one.

`chain_roles` returns the kinds found this way; a variable a role word named keeps its kind.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from memopt.trace.roles import decode_value
from memopt.trace.verdicts import verdict_of

__all__ = ["chain_roles"]

_UNNAMED = frozenset({None, "turn"})


def chain_roles(nodes: dict[str, dict[str, Any]], kinds: dict[str, str | None],
                edges: list[dict[str, Any]]) -> dict[str, str]:
    """Kinds (``judgement``, ``answer``, ``gold``, ``question``, ``context``) of the variables no role word named,
    from the shape of each question's chain (see the module docstring)."""
    reads: dict[str, set[str]] = defaultdict(set)
    writes: dict[str, set[str]] = defaultdict(set)
    writer: dict[str, str] = {}
    parents: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        s, t = e["source_full_node_id"], e["target_full_node_id"]
        if s not in nodes or t not in nodes:
            continue
        reads[e["op_id"]].add(s)
        writes[e["op_id"]].add(t)
        writer.setdefault(t, e["op_id"])
        if writer[t] == e["op_id"]:  # a later op's edge into it ("query → hit") reads it, it made nothing of it
            parents[t].add(s)
    read_somewhere = {s for read in reads.values() for s in read}
    found: dict[str, str] = {}
    ancestry: dict[str, set[str]] = {}

    def ancestors(fid: str) -> set[str]:
        if fid not in ancestry:
            ancestry[fid] = _ancestors(fid, parents)
        return ancestry[fid]

    def kind(fid: str) -> str | None:
        return found.get(fid, kinds.get(fid))

    for fid, op in writer.items():  # verdicts: read by nothing, saying right or wrong, beside a gold; not a unit's
        # new version
        if kind(fid) is None and fid not in read_somewhere and _says_verdict(nodes[fid]) and any(
                s not in writer and kinds.get(s) != "question" for s in reads[op]) and any(
                s in writer for s in reads[op]) and not any(
                nodes[s].get("full_name") == nodes[fid].get("full_name") for s in reads[op]):
            found[fid] = "judgement"
    for op, read in reads.items():  # what a judge read: the answer an op wrote, the gold no op wrote
        if not any(kind(w) == "judgement" for w in writes[op]) or any(kind(s) == "answer" for s in read):
            continue
        answers = [s for s in read if kind(s) is None and s in writer]
        golds = [s for s in read if kind(s) in _UNNAMED and s not in writer]  # a reference in prose reads as said
        if len(answers) == 1:
            found[answers[0]] = "answer"
            if len(golds) == 1 and not any(kind(s) == "gold" for s in read):
                found[golds[0]] = "gold"
    for answer in [f for f in nodes if kind(f) == "answer"]:
        made_from = ancestors(answer)
        questions = {a for a in made_from if kind(a) == "question"} | {
            q for op, read in reads.items() if answer in read for q in read if kind(q) == "question"}
        if not questions:
            starting = [a for a in made_from if a not in writer and kind(a) in _UNNAMED]
            if not starting:
                continue
            questions = {max(starting, key=lambda a: (str(nodes[a].get("created_at") or ""), a))}
            found[next(iter(questions))] = "question"
        read = [s for s in reads.get(writer.get(answer, ""), ()) if s in writer]
        own = [s for s in read if any(r in questions or questions & ancestors(r)
                                      for r in reads[writer[s]])]  # its writer worked from the question
        if len(own) < len(read) or any(kind(a) == "context" for a in made_from):
            continue  # a context named already, or the answer also reads memory directly (an agent's core block)
        for s in own:  # what the question's own ops wrote for the answer
            if kind(s) is None:
                found[s] = "context"
    return found


def _says_verdict(node: dict[str, Any]) -> bool:
    """Whether a variable's value says right or wrong: a judge's word, a record of one, or a score from 0 to 1 (a
    count or an age is not a verdict)."""
    value = decode_value(str(node.get("value", "")))
    try:
        if not 0 <= float(str(value).strip().strip('"')) <= 1:
            return False
    except ValueError:
        pass
    return verdict_of(value) is not None


def _ancestors(fid: str, parents: dict[str, set[str]]) -> set[str]:
    """Every variable a variable was made from, through the ops."""
    seen, stack = set(), [fid]
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen
