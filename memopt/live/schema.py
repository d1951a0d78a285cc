"""What every field of a Mem0 recording may hold: checked on reading, so a damaged record is one error naming the file,
the line and the field, before any decoder or graph builder reads it.

A spec is a string of the JSON kinds a field may have (``"str|null"``; ``"int"`` excludes booleans, ``"number"``
is an int or a float, ``"id"`` a one-line, non-blank string or an int: what names a variable of a graph), or a
tuple ``(kinds, item)`` for a list whose items follow ``item``, or a `Fields` for a JSON object. Fields a record
does not have are not checked unless `Fields.required` names them; fields the spec does not name are kept
unchecked (a newer tap may record more).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Fields", "HEADER", "RECORDS", "problem"]


@dataclass(frozen=True)
class Fields:
    """A JSON object's fields: name → spec, and the names it must have."""

    specs: dict[str, Any]
    required: tuple[str, ...] = ()
    kinds: str = "dict"


_MESSAGE = Fields({"role": "str|null", "content": "str|null", "name": "str|null"})
_MESSAGES = ("list|null", _MESSAGE)
_HIT = Fields({"id": "id", "text": "str|null", "score": "number|null"}, ("id",))
_RESULT = Fields({"id": "str|int|null", "memory": "str|null", "score": "number|null", "metadata": "dict|null"})
_ROW = Fields({"rowid": "int|null", "memory_id": "id", "old_memory": "str|null", "new_memory": "str|null",
               "event": "str", "created_at": "str|null"}, ("memory_id", "event"))
_IDS = {"ids": ("list|null", "id"), "texts": ("list|null", "str|null")}
_VECTOR_SEARCH = {"limit": "int|null", "filters": "dict|null", "hits": ("list|null", _HIT)}

HEADER = Fields({"mem0_version": "str", "major": "int|null", "prompts": "dict|null", "lm": "str|null",
                 "simulated": "bool|null", "started_at": "number|null"}, ("mem0_version",))
_COMMON = {"type": "str", "seq": "int", "call": "int|null"}
_SPECS: tuple[tuple[str, dict[str, Any], tuple[str, ...]], ...] = (
    ("add", {"phase": "str|null", "user_id": "id|null", "metadata": "dict|null", "messages": _MESSAGES,
             "infer": "bool|null", "results": "list|dict|null", "error": "str|null"}, ()),
    ("search", {"phase": "str|null", "query": "str|null", "user_id": "str|int|null", "limit": "int|null",
                "filters": "dict|null", "results": ("list|null", _RESULT), "error": "str|null"}, ()),
    ("llm", {"messages": _MESSAGES, "response": "str|null", "error": "str|null"}, ()),
    ("embed", {"text": "str|list|null", "action": "str|null"}, ()),
    ("vs.search", _VECTOR_SEARCH, ()),
    ("vs.keyword_search", _VECTOR_SEARCH, ()),
    ("vs.insert", _IDS, ()), ("vs.update", _IDS, ()), ("vs.delete", _IDS, ()), ("vs.get", _IDS, ()),
    ("history", {"rows": ("list|null", _ROW)}, ()),
    ("session", {"user_id": "id|null", "index": "int|null", "date_time": "str|null",
                 "dia_ids": ("list|null", "id"), "speakers": ("list|null", "str|null")}, ()),
    ("case", {"user_id": "id", "case_id": "id|null", "question": "str", "answer": "str|number",
              "search_call": "int|null", "gold": "str|number|null", "evidence": ("list|null", "str"),
              "category": "int|null", "context": "str|null", "prompt": "str|null", "at": "str|number|null",
              "date": "str|null"}, ("user_id", "question", "answer")),
    ("end", {"records": "int"}, ("records",)),
)
RECORDS = {kind: Fields({**_COMMON, **specs}, ("type", "seq", *required)) for kind, specs, required in _SPECS}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "str"
    return "list" if isinstance(value, list) else "dict" if isinstance(value, dict) else type(value).__name__


def _fits(value: Any, kinds: str) -> bool:
    allowed = set(kinds.split("|"))
    kind = _kind(value)
    if "id" in allowed and (kind == "int" or kind == "str" and value.strip() and not any(c in value for c in "\r\n")):
        return True
    return kind in allowed or (kind == "int" and "number" in allowed)


def problem(value: Any, spec: Any, path: str) -> str | None:
    """What is wrong with ``value`` under ``spec`` (``"field hits[2].id is a list, expected str"``), or None."""
    if isinstance(spec, str):
        return None if _fits(value, spec) else f"field {path} is {_kind(value)}, expected {spec.replace('|', ' or ')}"
    if isinstance(spec, tuple):
        kinds, item = spec
        if not _fits(value, kinds):
            return f"field {path} is {_kind(value)}, expected {kinds.replace('|', ' or ')}"
        if isinstance(value, list):
            for i, element in enumerate(value):
                found = problem(element, item, f"{path}[{i}]")
                if found:
                    return found
        return None
    if not isinstance(value, dict):
        return f"field {path} is {_kind(value)}, expected {spec.kinds}"
    for name in spec.required:
        if name not in value:
            return f"field {path + '.' if path else ''}{name} is missing"
    for name, inner in spec.specs.items():
        if name in value:
            found = problem(value[name], inner, f"{path + '.' if path else ''}{name}")
            if found:
                return found
    return None
