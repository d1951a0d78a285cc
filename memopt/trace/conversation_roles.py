"""The question and the conversation's turns of a smartcomment graph, told by what the graph does with them.

Role words (`memopt.trace.roles`) name most variables; some writers name none that memopt knows (a voice
assistant's ``Transcript``, a help desk's ``TicketMessage``, Graphiti's ``EpisodicNode``). What the graph does
with a variable then says what it is:

* a **judge** (whatever its name and category: only a judge reads a gold beside an answer) reads the question,
  the gold and the answer: of its inputs no word named, the one left beside them is the question, also when its
  speaker marks made it a turn (a player's line with ``speaker`` in its metadata);
* an op that **writes a gold** (an eval harness loading the reference answer for a question) reads the question:
  the one variable no op wrote and no word named that it reads is the question;
* the **conversation** is what memory is built from: a variable no op wrote (or one an op wrote from such inputs
  alone: a transcription of an audio clip) that an extraction op (a category saying ``extract``) reads, or that
  has the question's own class (the user's other utterances), or that an op other than a question's reads and whose
  value is something said (a message object with a sender and a text, an e-mail's ``from`` and ``body``, or a
  line of prose: a perceived event), is a turn; unless an op writes a later version of it (a memory block seeded
  at setup that tool calls rewrite): what is said is never rewritten.

`conversation_roles` returns the kinds found this way, for variables no role word named.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from memopt.trace.roles import decode_value

__all__ = ["SAID_KEYS", "WHO_KEYS", "conversation_roles", "message_object"]

_ANSWERED = frozenset({"gold", "answer"})
# a message object's keys: who said it (by name), and what was said
WHO_KEYS = ("name", "speaker", "who", "author", "sender", "from", "speaker_name")
SAID_KEYS = ("content", "text", "said", "message", "utterance", "body", "msg", "says")
_WHO = frozenset({*WHO_KEYS, "role"})


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
        asked = any(kinds.get(v) == "question" for v in read)
        if _ANSWERED <= {kinds.get(v) for v in read}:  # only a judge reads a gold beside an answer
            # a line with a speaker is a turn by its marks, but what a judge reads beside them is the question
            unnamed = [v for v in read if kinds.get(v) in (None, "turn") and v not in writes[op]]
        elif any(kinds.get(w) == "gold" for w in writes[op]):  # a reference loaded for the question it reads
            unnamed = [v for v in read if kinds.get(v) is None and v not in writes[op] and v not in writer]
        else:
            continue
        if len(unnamed) == 1 and not asked:
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
    asking = {op for op, read in reads.items() if any({**kinds, **found}.get(v) == "question" for v in read)}
    consumed = {v for op, read in reads.items() if op not in asking for v in read}
    rewritten = {nodes[t].get("full_name") for t in writer if t in nodes}  # a variable an op writes a version of
    for fid, n in nodes.items():
        if kinds.get(fid) is not None or fid in found or not raw(fid):
            continue
        if n.get("full_name") in rewritten and fid not in writer:
            continue  # the first version of a block an op later rewrites (a core memory seeded at setup): not said
        if fid in read_by_extraction or n.get("class_name") in classes or (fid in consumed and _said(n)):
            found[fid] = "turn"
    return found


def _said(node: dict[str, Any]) -> bool:
    """Whether a variable's value is something said: a message object (a sender and a text: ``{"author",
    "text"}``, an e-mail's ``{"from", "body"}``, a LangChain message) or prose (a perceived event's line), not a
    record of other fields (a form header, an audio clip's ``{"duration_s"}``, a feed cursor)."""
    raw = decode_value(str(node.get("value") or ""))
    value, role = message_object(raw)
    if role is not None:  # a LangChain message
        return True
    if isinstance(value, dict) and not isinstance(raw, list):  # a pair of words says nothing of itself
        keys = {str(k).lower() for k in value}
        return bool(keys & _WHO) and any(isinstance(value.get(k), str) and value[k].strip() for k in SAID_KEYS)
    return isinstance(value, str) and len(value.split()) >= 3


_MESSAGE_TYPES = {"ai": "assistant", "human": "user", "system": "system", "tool": "tool", "function": "tool"}
_PAIR_SPEAKER = re.compile(r"[A-Za-z][\w.'-]{0,30}")
_MESSAGE_CLASS = re.compile(r"^(AI|Human|System|Tool|Function)Message(?:Chunk)?$")
_MESSAGE_REPR = re.compile(r"^(AI|Human|System|Tool|Function)Message(?:Chunk)?\(content=(['\"])(?P<text>.*?)(?<!\\)\2"
                           r"\s*[,)]", re.S)


def message_object(value: Any) -> tuple[Any, str | None]:
    """A LangChain message as a message object and its role: ``{"type": "ai", "content": ...}``, its serialised
    constructor (``{"id": [..., "AIMessage"], "kwargs": {...}}``) or its repr (``AIMessage(content='...')``) →
    (``{"content": ...}``, ``"assistant"``); a pair ``[speaker, text]`` → ``{"speaker", "content"}`` (a role only
    for LangChain's words: ``("human", text)``); any other value as it is, with no role."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, str) for v in value) and \
            _PAIR_SPEAKER.fullmatch(value[0].strip()):  # [speaker, text], LangChain's ("human", text)
        role = _MESSAGE_TYPES.get(value[0].strip().lower())
        return {"speaker": role or value[0].strip(), "content": value[1]}, role
    if isinstance(value, str):
        found = _MESSAGE_REPR.match(value.strip())
        if found is None:
            return value, None
        return {"content": found.group("text")}, _MESSAGE_TYPES[found.group(1).lower()]
    if not isinstance(value, dict):
        return value, None
    ident, kwargs = value.get("id"), value.get("kwargs")
    if isinstance(ident, list) and ident and isinstance(kwargs, dict) and isinstance(ident[-1], str):
        found = _MESSAGE_CLASS.match(ident[-1])
        if found is not None:
            return kwargs, _MESSAGE_TYPES[found.group(1).lower()]
    kind = value.get("type")
    if isinstance(kind, str) and kind.lower() in _MESSAGE_TYPES and "content" in value:
        return value, _MESSAGE_TYPES[kind.lower()]
    return value, None
