"""Read the calls the real Mem0 makes (mem0ai 1.0.x: two; 2.x: one), the way an LM would: from the request text alone.

Mem0 sends no DSPy prompt. `read_request` recognises its two LLM calls and turns each into the inputs of
the SimLM operation it asks for; the directives come from the prompt text, as for DSPy prompts.

- **Fact extraction** → operation ``extract``, reply ``{"facts": [...]}``. System: the extraction prompt
  (Mem0's default or ``custom_fact_extraction_prompt``, verbatim). User: ``Input:`` then one
  ``role: content`` line per message (a multi-line content continues on lines without a role). The
  speaker of a line is the name its content starts with (``user: Alice: I moved ...`` → Alice, the way
  memopt feeds LoCoMo turns to Mem0), else the role capitalised (``User``, ``Assistant``). The session
  date is the last ``Today's date is <date>.`` sentence of the prompt that parses ("8 May 2023",
  "2023-05-08"; `memopt.core.text.parse_session_date`); without one, relative dates stay unresolved.
  Directives are read from the system text.
- **Update decision** → operation ``update``, reply ``{"memory": [{"id", "text", "event", "old_memory"}]}``.
  One user message: the update prompt, then Mem0's fixed text: the current memories as a Python repr
  list in a fenced block after ``Below is the current content of my memory`` (or ``Current memory is
  empty.``), the new facts as a Python repr list in the fenced block after ``The new retrieved facts are
  mentioned in the triple backticks``, then the JSON schema with its ``"memory"`` key. The lists are read
  with `ast.literal_eval` (literals only; an unreadable list counts as empty). Directives are read from
  the update prompt only, the text before Mem0's fixed part.
- **Additive extraction** (mem0ai 2.x) → operation ``extract``, reply ``{"memory": [{"id", "text",
  "attributed_to"}]}`` (ids "0", "1", …). System: Mem0's fixed ADD-only extraction prompt. User: ``## ``
  sections (``Summary``, ``Last k Messages``, ``Recently Extracted Memories``, ``Existing Memories``,
  ``New Messages``, ``Observation Date``, ``Current Date``, optionally ``Custom Instructions``) ending
  with ``# Output:``. The conversation is the ``New Messages`` section (``role: content`` lines, read as
  for 1.x). The session date is a ``Today's date is <date>.`` sentence of the custom instructions, else
  the ``Observation Date`` section (Mem0 fills it with the day of the call). Directives are read from the
  system prompt and the custom instructions together (both are instructions the LM is given).

Anything else is not a Mem0 call (`read_request` returns None). Replies are bare JSON objects, as Mem0's
``response_format: {"type": "json_object"}`` asks.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memopt.core.text import parse_session_date, python_literal

__all__ = ["Mem0Request", "read_request", "render_reply", "MEMORY_MARKER", "EMPTY_MARKER", "FACTS_MARKER",
           "OUTPUT_MARKER"]

MEMORY_MARKER = "Below is the current content of my memory"
EMPTY_MARKER = "Current memory is empty."
FACTS_MARKER = "The new retrieved facts are mentioned in the triple backticks"
OUTPUT_MARKER = "# Output:"

_INPUT = re.compile(r"^\s*Input:[ \t]*\n?")
_ROLE_LINE = re.compile(r"^(?P<role>system|user|assistant): ?(?P<content>.*)$")
_NAMED = re.compile(r"^(?P<speaker>[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}):\s+\S")
_TODAY = re.compile(r"\btoday['\u2019]?s date is:?\s*(?P<date>[^\n]*)", re.IGNORECASE)
_FENCE = re.compile(r"```[^\n]*\n(?P<body>.*?)```", re.DOTALL)
_LITERAL_LIMIT = 200_000
_SECTION = re.compile(r"^## (?P<name>[A-Z][A-Za-z ]+)\n", re.MULTILINE)


@dataclass(frozen=True)
class Mem0Request:
    """One recognised Mem0 call: the SimLM operation, its output key, the instructions and the inputs."""

    operation: str
    output: str
    instructions: str
    inputs: dict[str, str]
    reply: str = "plain"  # "plain": {output: values}; "additive": 2.x's {"memory": [{"id", "text", ...}]}


def _session_date(*texts: str) -> str:
    for text in texts:
        for match in reversed(list(_TODAY.finditer(text))):
            if parse_session_date(match.group("date")) is not None:
                return match.group("date").strip().rstrip(".")
    return ""


def _messages(body: str) -> list[tuple[str, str]]:
    messages: list[tuple[str, str]] = []
    for line in body.splitlines():
        m = _ROLE_LINE.match(line)
        if m:
            messages.append((m.group("role"), m.group("content").strip()))
        elif messages and line.strip():
            role, content = messages[-1]
            messages[-1] = (role, f"{content} {line.strip()}".strip())
    return messages


def _conversation(messages: list[tuple[str, str]]) -> str:
    lines = []
    for role, content in messages:
        if role == "system" or not content:
            continue
        lines.append(content if _NAMED.match(content) else f"{role.capitalize()}: {content}")
    return "\n".join(lines)


def _read_extraction(system: str, user: str) -> Mem0Request | None:
    start = _INPUT.match(user)
    if start is None:
        return None
    messages = _messages(user[start.end():])
    if not messages:
        return None
    inputs = {"conversation": _conversation(messages), "session_date": _session_date(system, user)}
    return Mem0Request("extract", "facts", system, inputs)


def _literal(text: str) -> Any:
    if len(text) > _LITERAL_LIMIT:
        return None
    try:
        return python_literal(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _block_after(text: str, position: int) -> Any:
    m = _FENCE.search(text, position)
    return _literal(m.group("body")) if m else None


def _read_update(text: str) -> Mem0Request | None:
    facts_at = text.rfind(FACTS_MARKER)
    if facts_at < 0 or '"memory"' not in text[facts_at:]:
        return None
    memory_at = text.rfind(MEMORY_MARKER, 0, facts_at)
    empty_at = text.rfind(EMPTY_MARKER, 0, facts_at)
    fixed_at = max(memory_at, empty_at)
    memories = _block_after(text, memory_at) if memory_at > empty_at else []
    facts = _block_after(text, facts_at)
    if not isinstance(memories, list):
        memories = []
    existing = [{"id": str(m["id"]), "text": str(m["text"])} for m in memories
                if isinstance(m, dict) and "id" in m and "text" in m]
    new_facts = [str(f) for f in facts if str(f).strip()] if isinstance(facts, list) else []
    inputs = {"existing_memories": json.dumps(existing, ensure_ascii=False),
              "new_facts": json.dumps(new_facts, ensure_ascii=False)}
    return Mem0Request("update", "memory", text[: fixed_at if fixed_at >= 0 else facts_at].strip(), inputs)


def _sections(user: str) -> dict[str, str]:
    marks = list(_SECTION.finditer(user))
    ends = [m.start() for m in marks[1:]] + [user.rfind(OUTPUT_MARKER)]
    return {m.group("name").strip(): user[m.end():end].strip() for m, end in zip(marks, ends, strict=True)}


def _read_additive(system: str, user: str) -> Mem0Request | None:
    if not user.rstrip().endswith(OUTPUT_MARKER) or "## New Messages\n" not in user:
        return None
    sections = _sections(user)
    messages = _messages(sections.get("New Messages", ""))
    if not messages:
        return None
    custom = sections.get("Custom Instructions", "")
    observed = sections.get("Observation Date", "")
    date = _session_date(custom) or (observed if parse_session_date(observed) is not None else "")
    inputs = {"conversation": _conversation(messages), "session_date": date}
    return Mem0Request("extract", "facts", f"{system.strip()}\n\n{custom}".strip(), inputs, "additive")


def read_request(system: str, user: str) -> Mem0Request | None:
    """The Mem0 call a (system, last user message) pair makes, or None when it is not one of Mem0's calls."""
    return _read_update(user) or _read_additive(system, user) or _read_extraction(system, user)


def render_reply(request: Mem0Request, values: dict[str, Any]) -> str:
    """The bare JSON object Mem0 parses: ``{"facts": [...]}``, ``{"memory": [...]}``, or 2.x's additive
    ``{"memory": [{"id", "text", "attributed_to"}]}``."""
    found = values.get(request.output) or []
    if request.reply == "additive":
        return json.dumps({"memory": [{"id": str(i), "text": str(fact), "attributed_to": "user"}
                                      for i, fact in enumerate(found)]}, ensure_ascii=False)
    return json.dumps({request.output: found}, ensure_ascii=False)
