"""Which field of a record answers a question: a record's fields are each a different fact about one thing.

A contact card ``{"ORG": "Head of Procurement", "TITLE": "Procurement Analyst"}`` has the words "Head of
Procurement", but a question about a job title is answered by its ``TITLE``: a value written into the wrong field
(a patch that set ``TITLE`` stored under ``ORG``) is not held for that question. When a question names a field of
a record (every word of the key is a word of the question: ``TITLE`` in "What's Lena's current job title?",
``billing_day`` in "Which billing day ..."), only that field's value holds the piece. Keys that name the content of
any record (``text``, ``memory``, ``value``, ``name``, dates and times...) name no particular fact and are left
out. `misfiled` tells a value whose records state the piece only outside the field the question names.

A store that keeps one variable per field of a record (``OPP-0187.Budget__c`` beside ``OPP-0187.Name``) states
whose record it is in the record's other fields: a value written to a field of a record whose fields name none of
the people or things the question names, while another record's fields do, is held for that other record, not for
the question (`another_records`: a writeback that matched the wrong record).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from typing import Any

import networkx as nx

from memopt.attribution.need import names_in
from memopt.attribution.normalise import plain
from memopt.trace.roles import decode_value

__all__ = ["misfiled", "another_records"]

_GENERIC = frozenset("text content memory memories value values name names fact facts summary note notes body message "
                     "data description time date day when timestamp created updated at id type kind status "
                     "label tags tag source user role".split())


def _key_words(key: Any) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(key))
    return [w for w in re.split(r"[^A-Za-z]+", spaced.lower()) if w]


def _named_fields(value: Any, asked: set[str]) -> tuple[list[Any], bool]:
    """The values of the fields the question names anywhere in a value (records in lists and JSON strings
    too), and whether it holds a record at all."""
    if isinstance(value, str) and value.strip()[:1] in "[{":
        value = decode_value(value)
    if isinstance(value, list):
        found: list[Any] = []
        record = False
        for item in value:
            more, is_record = _named_fields(item, asked)
            found += more
            record = record or is_record
        return found, record
    if not isinstance(value, dict):
        return [], False
    found = []
    for key, field in value.items():
        words = _key_words(key)
        if words and all(w in asked for w in words) and not set(words) & _GENERIC and any(len(w) >= 4 for w in words):
            found.append(field)
        elif isinstance(field, (dict, list)):
            found += _named_fields(field, asked)[0]
    return found, True


def misfiled(value: Any, question: str, states: Callable[[str], bool]) -> bool:
    """Whether a value's records name the field the question asks about and none of those fields states the
    piece (``states``: whether a text states it), though the value does elsewhere."""
    asked = {w for w in re.split(r"[^a-z]+", question.lower()) if w}
    fields, _ = _named_fields(value, asked)
    if not fields or any(states(plain(f)) for f in fields):
        return False
    return states(plain(value))


def _record_of(name: str) -> tuple[str, str] | None:
    """(record, field) of a variable named ``<store>:<record>.<field>`` (``Opportunity:OPP-0187.Budget__c``;
    ``Slot:u_482.diet.keto`` is record ``u_482``'s field ``diet.keto``), or None."""
    store, _, rest = name.rpartition(":")
    record, dot, field = rest.partition(".")
    if not (dot and record and re.fullmatch(r"[A-Za-z_][\w.-]*", field)):
        return None
    return f"{store}:{record}", field


_RECORDS: weakref.WeakKeyDictionary[nx.DiGraph, tuple[int, dict[str, dict[str, list[tuple[str, str]]]]]] = \
    weakref.WeakKeyDictionary()


def _unkinded(d: dict[str, Any]) -> str:
    """A variable's name without the kind memopt gave it (``memory:``, ``turn:``): a record's fields are one record
    whichever were read as turns (fields no op wrote) and which as store units."""
    name, kind = str(d.get("name") or ""), str(d.get("kind") or "")
    return name.removeprefix(f"{kind}:") if kind else name


def _record_fields(G: nx.DiGraph) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """Store → record → (field, text) of every variable named ``<record>.<field>`` (remembered per graph)."""
    cached = _RECORDS.get(G)
    if cached is not None and cached[0] == G.number_of_nodes():
        return cached[1]
    found: dict[str, dict[str, list[tuple[str, str]]]] = {}
    for d in (d for _, d in G.nodes(data=True) if d.get("type") == "variable"):
        named = _record_of(_unkinded(d))
        if named is not None:
            found.setdefault(named[0].rpartition(":")[0], {}).setdefault(named[0], []).append(
                (named[1], plain(d.get("value")).lower()))
    _RECORDS[G] = (G.number_of_nodes(), found)
    return found


def _phrases(question: str, names: list[str]) -> list[str]:
    """The question's names as it writes them together: "Harbor Logistics" is one name, not "Harbor" and
    "Logistics" (a record of "Harbor Freight Co" does not name it)."""
    if not names:
        return []
    run = "|".join(re.escape(n) for n in sorted(set(names), key=len, reverse=True))
    found = [m.group(0) for m in re.finditer(rf"\b(?:{run})(?:\s+(?:{run}))*\b", question)]
    return found or names


def another_records(G: nx.DiGraph, node: str, question: str) -> bool:
    """Whether a variable is a field of a record whose other fields name none of the question's people and things
    (`memopt.attribution.need.names_in`, each as the question writes it) while another record's fields of the same
    store do (see the module docstring)."""
    own = _record_of(_unkinded(G.nodes[node]))
    names = names_in(question)
    if own is None or not names:
        return False
    records = _record_fields(G).get(own[0].rpartition(":")[0], {})
    phrases = _phrases(question, names)

    def names_one(record: str) -> bool:
        text = " ".join(t for field, t in records.get(record, ()) if field != own[1])
        return any(re.search(rf"\b{re.escape(n.lower())}\b", text) for n in phrases)

    return not names_one(own[0]) and any(names_one(r) for r in records if r != own[0])
