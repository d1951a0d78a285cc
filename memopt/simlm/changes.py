"""Which of two memories a sentence says replaced the other, in whatever voice and order it says it.

A person reads "X was overwritten by Y", "Y overwrote X", "the update replaced X with Y", "it turned X into Y",
"X became Y", "X → Y", "changed from X to Y", "instead of adding Y, it rewrote X" and "memory before: X ... memory
after: Y" as the same fact: X is the old memory, Y the new one. `replacement` reads that from the words around two
quoted statements (used by `memopt.simlm.examples`); `label_side` reads it from a field's label ("before", "old",
"previously" against "after", "new", "now"); `unquoted_replacement` reads the same from a sentence that does not quote
the two memories ("the update overwrote Zane plays chess on Sundays with Zane joined a chess club"), and
`unquoted_removal` a memory removed ("the update removed Zane plays chess on Sundays").
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["CHANGE", "REMOVAL", "replacement", "label_side", "unquoted_removal", "unquoted_replacement"]

CHANGE = re.compile(r"\b(?:replac\w*|overwr\w*|rewr\w*|supersed\w*|swapp?\w*|substitut\w*|clobber\w*|became|become|"
                    r"becomes|turn(?:ed|s|ing)? into|chang\w*|updat\w*|amend\w*|modif\w*|edit(?:ed|s)?)\b|→|->|=>",
                    re.I)
# a verb of changing in the passive ("was overwritten", "got replaced", "has been rewritten by")
_PASSIVE = re.compile(r"\b(?:was|were|is|are|been|being|got|gets|get)\s+(?:\w+\s+){0,2}?(?:replac|overwr|rewr|"
                      r"supersed|swapp|substitut|clobber|chang|updat|amend|modif|edit)\w*", re.I)
# what comes between the old memory and the new one when the old one comes first
_TOWARD = re.compile(r"^\W*(?:\w+\W+){0,3}?(?:by|with|for|to|into|as)\b|\b(?:became|become|becomes|turn(?:ed|s)? "
                     r"into)\b|→|->|=>", re.I)
REMOVAL = re.compile(r"\b(?:delet\w*|remov\w*|erased?|wiped|forgot\w*|dropp\w*|purg\w*|discard\w*|"
                     r"no longer (?:in|held|stored|there|present|kept)|(?:missing|absent) from)\b", re.I)
_OLD = frozenset("before old previous previously original originally earlier former formerly prior was".split())
_NEW = frozenset("after new now replacement current currently later became updated result".split())


def replacement(before: str, between: str) -> bool | None:
    """For two memories quoted one after the other, with ``before`` the words ahead of the first and ``between``
    the words between them: True when the first is the old one, False when it is the new one, None when the words
    say nothing of a replacement."""
    if CHANGE.search(between):
        if _PASSIVE.search(between) or re.search(r"\b(?:became|become|becomes|into)\b|→|->|=>", between, re.I):
            return True
        verb = CHANGE.search(between)
        after_verb = between[verb.end():] if verb else ""
        return bool(re.match(r"^\W*(?:to|into|as)\b", after_verb, re.I))  # "changed to": the first is old
    tail = " ".join(before.split()[-8:])
    if CHANGE.search(tail) or re.search(r"\bfrom\s*$", tail, re.I):  # "replaced X with Y", "changed from X to Y"
        return True if _TOWARD.search(between) or CHANGE.search(tail) else None
    return None


def label_side(label: str) -> str | None:
    """``"old"`` when a field's label calls its memory the earlier one ("Memory before", "Old value"), ``"new"``
    when it calls it the later one ("After", "New memory"), else None."""
    words = set(re.findall(r"[a-z]+", label.lower()))
    if words & _OLD and not words & _NEW:
        return "old"
    if words & _NEW and not words & _OLD:
        return "new"
    return None


_NOUN = re.compile(r"^(?:the\s+|a\s+|its\s+|their\s+)?(?:(?:stored|old|new|existing|previous|earlier|original|"
                   r"compatible|related)\s+)*(?:memory|memories|fact|facts|entry|record|note|unit)\b\s*"
                   r"(?:that\s+says|saying|which\s+said|that|:|,)?\s*", re.I)
_AUX = re.compile(r"\s+(?:was|were|is|are|has\s+been|had\s+been|got|gets)(?:\s+\w+ly)?\s*$", re.I)
_BY = re.compile(r"\s+(?:with|by|into|to|for|as)\s+", re.I)
_END = re.compile(r"\s*(?:,|;|\.\s|\s(?:although|though|even though|because|since|while|but|so)\s).*$", re.I)


def _statement(text: str) -> str:
    return _END.sub("", _NOUN.sub("", text.strip(" .,;:"))).strip(" .,;:")


def unquoted_replacement(text: str, is_statement: Callable[[str], bool]) -> tuple[str, str] | None:
    """(old, new) when a sentence says without quotes that one memory replaced another: "X was overwritten by Y",
    "V X with Y" (the verb first), "Y overwrote X"; each side must read as a statement about someone."""
    for verb in CHANGE.finditer(text):  # the first verb of changing that has a memory on each side
        left, right = text[:verb.start()], text[verb.end():]
        by = _BY.split(right, maxsplit=1)
        if _AUX.search(left) and len(by) == 2:  # "X was overwritten by Y"
            pair = (_statement(_AUX.sub("", left)), _statement(by[1]))
        elif len(by) == 2 and is_statement(_statement(by[0])):  # "the update replaced X with Y"
            pair = (_statement(by[0]), _statement(by[1]))
        elif re.match(r"(?:→|->|=>|became|become|becomes|turn)", verb.group(0), re.I):  # "X -> Y", "X became Y"
            pair = (_statement(left.split(":")[-1]), _statement(right))
        else:  # "Y overwrote X"
            pair = (_statement(right), _statement(left.split(":")[-1]))
        if all(is_statement(side) for side in pair):
            return pair
    return None


def unquoted_removal(text: str, is_statement: Callable[[str], bool]) -> str | None:
    """The memory a sentence says was removed, without quotes: "the update removed X", "X was deleted"."""
    for verb in REMOVAL.finditer(text):
        left, right = text[:verb.start()], text[verb.end():]
        for side in ((_statement(_AUX.sub("", left.split(":")[-1])),) if _AUX.search(left) else ()) + \
                (_statement(right),):
            if is_statement(side):
                return side
    return None
