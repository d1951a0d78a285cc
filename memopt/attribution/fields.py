"""Which field of a record answers a question: a record's fields are each a different fact about one thing.

A contact card ``{"ORG": "Head of Procurement", "TITLE": "Procurement Analyst"}`` has the words "Head of
Procurement", but a question about a job title is answered by its ``TITLE``: a value written into the wrong field
(a patch that set ``TITLE`` stored under ``ORG``) is not held for that question. When a question names a field of
a record (every word of the key is a word of the question: ``TITLE`` in "What's Lena's current job title?",
``billing_day`` in "Which billing day ..."), only that field's value holds the piece. Keys that name the content of
any record (``text``, ``memory``, ``value``, ``name``, dates and times...) name no particular fact and are left
out. `misfiled` tells a value whose records state the piece only outside the field the question names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memopt.attribution.normalise import plain
from memopt.trace.roles import decode_value

__all__ = ["misfiled"]

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
