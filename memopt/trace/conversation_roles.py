"""The question and the conversation's turns of a smartcomment graph, told by what the graph does with them.

Role words (`memopt.trace.roles`) name most variables; some writers name none that memopt knows (a voice
assistant's ``Transcript``, a help desk's ``TicketMessage``, Graphiti's ``EpisodicNode``). What the graph does
with a variable then says what it is:

* a **judge** (whatever its name and category: only a judge reads a gold beside an answer) reads the question,
  the gold and the answer: of its inputs no word named, the one left beside them is the question;
* the **conversation** is what memory is built from: a variable no op wrote (or one an op wrote from such inputs
  alone: a transcription of an audio clip) that an extraction op (a category saying ``extract``) reads, or that
  has the question's own class (the user's other utterances), is a turn.

`conversation_roles` returns the kinds found this way, for variables no role word named.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

__all__ = ["conversation_roles"]

_ANSWERED = frozenset({"gold", "answer"})


def conversation_roles(nodes: dict[str, dict[str, Any]], kinds: dict[str, str | None], edges: list[dict[str, Any]],
                       op_categories: dict[str, Any]) -> dict[str, str]:
    """Kinds (``question``, ``turn``) of the variables no role word named, from the judges that read them and the
    extraction ops that build memory from them (see the module docstring)."""
    reads: dict[str, set[str]] = defaultdict(set)
    writes: dict[str, set[str]] = defaultdict(set)
    writer: dict[str, str] = {}
    for e in edges:
        reads[e["op_id"]].add(e["source_full_node_id"])
        writes[e["op_id"]].add(e["target_full_node_id"])
        writer.setdefault(e["target_full_node_id"], e["op_id"])
    found: dict[str, str] = {}
    for op, read in reads.items():
        if not _ANSWERED <= {kinds.get(v) for v in read}:  # only a judge reads a gold beside an answer
            continue
        unnamed = [v for v in read if kinds.get(v) is None and v not in writes[op]]
        if len(unnamed) == 1 and not any(kinds.get(v) == "question" for v in read):
            found[unnamed[0]] = "question"

    def raw(fid: str) -> bool:
        """No op wrote it, or an op wrote it from inputs no op wrote and no role word named (a transcription)."""
        op = writer.get(fid)
        if op is None:
            return True
        return all(s not in writer and kinds.get(s) is None and s not in found for s in reads[op] if s != fid)

    classes = {nodes[q].get("class_name") for q, k in {**kinds, **found}.items() if k == "question"} - {None, ""}
    extracting = [op for op, c in op_categories.items() if "extract" in str(c or "").lower()]
    read_by_extraction = {v for op in extracting for v in reads.get(op, ())}
    for fid, n in nodes.items():
        if kinds.get(fid) is not None or fid in found or not raw(fid):
            continue
        if fid in read_by_extraction or n.get("class_name") in classes:
            found[fid] = "turn"
    return found
