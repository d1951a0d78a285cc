"""Whose fact a memory is: a household's or a team's shared store keeps each fact with its owner.

A system serving several people tags each fact with the person it is about: a record's ``owner`` (``user``,
``person``, ``member``, ``speaker``...) field, or a line's leading ``[ana]`` tag. A first-person question ("What
diet did I tell you I'm following?") asked by one of them (the question's ``speaker`` in its metadata or value)
is answered only by the asker's facts: a fact with the same words filed under someone else is not held for them.
`held_for_someone_else` tells the records of a value that state a piece and are all someone else's; a question
about people it names ("When is Maya's birthday?") is answered only by their facts (`held_for_others`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from memopt.attribution.cast import ROLES
from memopt.attribution.normalise import plain

__all__ = ["asker_of", "first_person", "held_for_others", "held_for_someone_else"]

_OWNER_KEYS = ("owner", "owner_id", "user", "user_name", "person", "member", "speaker", "about", "subject_person",
               "subject")
_ASKER_KEYS = ("speaker", "speaker_name", "user", "user_name", "asker", "from", "author")
_TAG = re.compile(r"^\s*(?:[-*•]\s*)?\[(?P<who>[A-Za-z][\w .'-]{0,30})\]\s*(?P<rest>.*)$", re.S)
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|i'm|i've|i'd|myself)\b", re.IGNORECASE)


def first_person(question: str) -> bool:
    """Whether a question asks about its asker ("my", "I")."""
    return bool(_FIRST_PERSON.search(question))


def asker_of(node: Mapping[str, Any]) -> str | None:
    """Who asked a question: its value's or metadata's speaker (lower case), when a name and not a role."""
    value, meta = node.get("value"), node.get("metadata") or {}
    for holder in (value, meta):
        if isinstance(holder, Mapping):
            found = next((holder[k] for k in _ASKER_KEYS if isinstance(holder.get(k), str) and holder[k].strip()),
                         None)
            if found and found.strip().lower() not in ROLES:
                return found.strip().lower()
    return None


def _records(value: Any) -> list[tuple[str | None, str]]:
    """(owner, text) of each fact a value holds: a record's owner field, a line's ``[owner]`` tag, else None."""
    if isinstance(value, Mapping):
        owner = next((str(value[k]) for k in _OWNER_KEYS if isinstance(value.get(k), str)), None)
        if owner is not None:
            return [(owner.strip().lower(), plain({k: v for k, v in value.items() if k not in _OWNER_KEYS}))]
        return [r for v in value.values() for r in _records(v)]
    if isinstance(value, list):
        return [r for v in value for r in _records(v)]
    out: list[tuple[str | None, str]] = []
    for line in plain(value).splitlines():
        tagged = _TAG.match(line)
        out.append((tagged.group("who").strip().lower(), tagged.group("rest")) if tagged else (None, line))
    return out


def _a_person(owner: str | None) -> bool:
    """Whether an owner names a person (``ana``, ``Ben Ortiz``), not an account id (``u88``) or a role."""
    return owner is not None and bool(re.fullmatch(r"[a-z][a-z .'-]{0,40}", owner)) and owner not in ROLES


def held_for_someone_else(value: Any, asker: str, states: Callable[[str], bool]) -> bool:
    """Whether every fact of ``value`` that ``states`` (holds the piece's words) is filed under a person who is
    not ``asker`` (and there is at least one). An owner that is no person's name (an account id, ``u88``, a role,
    ``shared``) says nothing about whose fact it is."""
    stating = [owner for owner, text in _records(value) if states(text)]
    return bool(stating) and all(_a_person(owner) and owner != asker for owner in stating)


def held_for_others(value: Any, names: list[str], states: Callable[[str], bool]) -> bool:
    """Whether every fact of ``value`` that ``states`` the piece is filed under a person none of ``names`` (the
    people a question names, lower case) is part of (and there is at least one): Jordan's row does not hold Maya's
    birthday."""
    stating = [owner for owner, text in _records(value) if states(text)]
    return bool(stating) and all(_a_person(owner) and not any(n in owner.split() for n in names)
                                 for owner in stating)
