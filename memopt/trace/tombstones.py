"""How a trace says a memory unit was deleted, whichever way its author wrote it down.

A smartcomment graph has no delete of its own: a system draws one. The ways seen, all read as a delete of the unit:

- an edge from the unit into a ``marker`` node whose value says so (``DELETED``, ``DELETE``, ``[removed]``,
  ``tombstone``, ...) or whose class does (``DeleteMarker``, ``delete_marker``, ``tombstone``);
- such a marker with no edge from the unit, named after it: the unit's own next version (``MemoryItem:mem_01@2``),
  a node of another class with the unit's name (``DeleteMarker:mem_01@1``), or a name ending with it
  (``deleted:mem_01@1``, ``evicted/ltm-3@1``) — `unit_named`;
- a new version of the unit whose value or metadata says what happened to it (Mem0's history rows:
  ``{"event": "DELETE"}``; ``"deleted": true``;
  a SQL row's ``"tombstone": 1``; ``"status": "removed"``, ``"archived"`` or ``"retracted"``; a soft
  delete's ``"deleted_at": "2023-05-20"``, ``"invalid_at"``, ``"expired_at"``, a bi-temporal ``"valid_to"``;
  ``"status": "superseded"``; ``"is_active": false``; any status field saying so: FHIR's ``"verificationStatus":
  "entered-in-error"``, an event's ``"status": "cancelled"``, a task's ``"closed"``; a TTL sweep's ``"expired":
  true``) — `is_tombstone`;
- when the store is the conversation itself (a system that keeps raw messages and evicts them), an edge from a
  message into a DELETE marker that no unit points at, from messages only, or a marker named after a message —
  `evicted_turns`;
- a new version of the unit with nothing in it (``""``, ``null``, ``{}``, ``{"id": "m1", "memory": ""}``, a key
  store's ``(nil)`` reply), also as a ``marker`` node: an overwrite that leaves nothing is a delete — `is_emptied`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["is_tombstone", "is_emptied", "is_delete_class", "is_delete_command", "unit_named", "evicted_turns"]

_WORD = re.compile(r"^\W*(?:deleted?|removed?|tombstoned?|tombstone|evicted|expired|forgotten|purged|archived|"
                   r"inactive|invalid|invalidated|obsolete|retired|discarded|retracted|revoked|withdrawn|superseded|"
                   r"deprecated|entered[-_ ]in[-_ ]error|cancell?ed|closed|suspended|deactivated|disabled)\W*$",
                   re.IGNORECASE)
_EVENT_KEYS = ("event", "action", "op", "operation", "status", "state", "type")
_FLAG_KEYS = ("deleted", "is_deleted", "isdeleted", "removed", "is_removed", "tombstone", "archived", "is_archived",
              "expired", "is_expired", "isexpired", "cancelled", "canceled", "is_cancelled", "iscancelled")
_LIVE_KEYS = ("is_active", "isactive", "active", "valid", "is_valid", "isvalid", "enabled", "alive")
_WHEN_KEYS = ("deleted_at", "deletedat", "removed_at", "removedat", "archived_at", "archivedat", "invalid_at",
              "invalidat", "invalidated_at", "invalidatedat", "expired_at", "expiredat", "tombstoned_at",
              "retracted_at", "retractedat", "revoked_at", "revokedat", "valid_to", "validto", "valid_until",
              "validuntil", "superseded_at", "supersededat")
_EMPTY = frozenset({"", "null", "none", "[]", "{}", '""', "nil", "(nil)", "<nil>", "(null)", "<null>", "(none)",
                    "(empty)", "(empty list or set)"})
_NAMING_KEYS = frozenset({"id", "uuid", "key", "name", "memory_id", "unit_id", "user_id", "agent_id", "run_id",
                          "hash", "version"})
_CLASSES = frozenset({"deletemarker", "delete_marker", "deleted", "tombstone", "deletion", "delete"})


def _says_delete(text: Any) -> bool:
    return isinstance(text, str) and bool(_WORD.match(text.strip()))


def _flag_set(flag: Any) -> bool:
    """A delete flag that is on: ``true``, or a SQL column's ``1`` (``tombstone = 1``)."""
    return flag is True or (type(flag) is int and flag == 1) or str(flag).strip().lower() in ("true", "1")


def is_tombstone(value: Any, metadata: Mapping[str, Any] | None = None) -> bool:
    """Whether a value (decoded) or its metadata says the unit is deleted: a delete word alone, or an ``event`` /
    ``action`` / ``status`` saying DELETE, or a ``deleted: true`` flag."""
    if _says_delete(value):
        return True
    for holder in (value, metadata):
        if not isinstance(holder, Mapping):
            continue
        keys = {str(k).lower(): v for k, v in holder.items()}
        if any(_says_delete(v) for k, v in keys.items() if k in _EVENT_KEYS or k.endswith("status")):
            return True
        if any(_flag_set(keys[k]) for k in _FLAG_KEYS if k in keys):
            return True
        if any(keys[k] is False or str(keys[k]).lower() == "false" for k in _LIVE_KEYS if k in keys):
            return True
        if any(keys[k] not in (None, False) and str(keys[k]).strip().lower() not in _EMPTY | {"false"}
               for k in _WHEN_KEYS if k in keys):
            return True
    return False


_COMMAND_KEYS = (*_EVENT_KEYS, "stmt", "statement", "command", "cmd", "verb", "intent", "method")
_COMMAND = re.compile(r"^\W*(?:soft[-_ ]?|hard[-_ ]?)?(?:delete|remove|archive|retire|forget|purge|retract|revoke|"
                      r"cancel|expire|invalidate|tombstone|deactivate)\w*\W*$", re.IGNORECASE)


def is_delete_command(value: Any) -> bool:
    """Whether a (decoded) value is one command to delete something, as a planner writes it for an executor
    (``{"stmt": "SOFT_DELETE", "match": {...}}``, ``{"command": "REMOVE", "where": {...}}``, ``{"action":
    "archive", ...}``): a command key whose verb deletes."""
    if not isinstance(value, Mapping):
        return False
    return any(isinstance(v, str) and _COMMAND.match(v) for k, v in value.items()
               if str(k).lower() in _COMMAND_KEYS)


def is_emptied(value: Any) -> bool:
    """Whether a (decoded) value holds nothing: empty, ``null``, or a record whose fields are all empty but the ones
    that name it (``{"id": "m1", "memory": ""}``)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _EMPTY):
        return True
    if isinstance(value, Mapping):
        return all(is_emptied(v) for k, v in value.items() if str(k).lower() not in _NAMING_KEYS)
    if isinstance(value, list):
        return all(is_emptied(v) for v in value)
    return False


def is_delete_class(class_name: str | None) -> bool:
    """Whether a marker's class says it marks a delete (``DeleteMarker``, ``delete_marker``, ``tombstone``)."""
    return bool(class_name) and re.sub(r"[^a-z]", "", str(class_name).lower()) in {
        re.sub(r"[^a-z]", "", c) for c in _CLASSES}


def unit_named(marker: Mapping[str, Any], units: Mapping[str, str]) -> str | None:
    """The unit (its ``class:name``) a marker with no edge from a unit is named after: the same ``class:name``, the
    same name, or a name ending with the unit's (``deleted:mem_01``); ``units`` maps each unit's ``class:name`` to
    its name. None unless exactly one unit fits."""
    full, name = str(marker.get("full_name") or ""), str(marker.get("name") or "")
    if full in units:
        return full
    for candidates in ([f for f, n in units.items() if n == name],
                       [f for f, n in units.items() if re.search(rf"(?:^|[:/#@\s]){re.escape(n)}$", name)]):
        if len(set(candidates)) == 1:
            return candidates[0]
        if candidates:
            return None
    return None


def evicted_turns(nodes: Mapping[str, Mapping[str, Any]], kinds: Mapping[str, str | None],
                  markers: Mapping[str, list[Mapping[str, Any]]]) -> dict[str, str]:
    """Message full id → the op that deleted it from a store of raw messages: the op of a DELETE marker named after
    the message, else of the edges into a marker that come from messages only (``markers``: each DELETE marker no
    unit points at and no unit is named by → its edges)."""
    turns = {str(n["full_name"]): str(n["name"]) for fid, n in nodes.items() if kinds.get(fid) == "turn"}
    by_name = {str(n["full_name"]): fid for fid, n in nodes.items() if kinds.get(fid) == "turn"}
    found: dict[str, str] = {}
    for marker, edges in markers.items():
        if not edges:
            continue
        named = unit_named(nodes[marker], turns)
        if named is not None:
            found[by_name[named]] = str(edges[0]["op_id"])
            continue
        sources = [e["source_full_node_id"] for e in edges]
        if all(kinds.get(s) == "turn" for s in sources):
            found.update({s: str(e["op_id"]) for s, e in zip(sources, edges, strict=True)})
    return found
