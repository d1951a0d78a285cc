"""Which of two memories a sentence says replaced the other, in whatever voice, order and language it says it.

A person reads "X was overwritten by Y", "Y overwrote X", "the update replaced X with Y", "it turned X into Y",
"X became Y", "X → Y", "changed from X to Y", "instead of adding Y, it rewrote X", "hat X mit Y überschrieben",
"sobrescribió X con Y" and "memory before: X ... memory after: Y" as the same fact: X is the old memory, Y the new one.
The verbs, auxiliaries and prepositions are the ``change``, ``passive`` and ``toward`` words of
`memopt.simlm.feedback_cues.yaml`. `replacement` reads that from the words around two quoted statements (used by
`memopt.simlm.examples`); `label_side` reads it from a field's label ("before", "old", "vorher" against "after",
"new", "nachher"); `unquoted_replacement` reads the same from a sentence that does not quote the two memories ("the
update overwrote Zane plays chess on Sundays with Zane joined a chess club"), and `unquoted_removal` a memory removed
("the update removed Zane plays chess on Sundays").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from memopt.simlm.example_parts import CUES

__all__ = ["change", "REMOVAL", "replacement", "label_side", "unquoted_removal", "unquoted_replacement"]

_ARROW = re.compile(r"→|->|=>")
_BECAME = re.compile(r"\b(?:became|become|becomes|turn(?:ed|s|ing)?\s+into|into)\b|→|->|=>", re.I)
REMOVAL = CUES["removal"]
_VERB = CUES["change"]
_TOWARD = CUES["toward"]


def change(text: str) -> re.Match[str] | None:
    """The first word of changing in a text ('overwrote', 'ersetzt', '→')."""
    found = [m for m in (_VERB.search(text), _ARROW.search(text)) if m]
    return min(found, key=lambda m: m.start()) if found else None


def _passive(text: str) -> bool:
    """A verb of changing in the passive ("was overwritten", "got replaced", "wurde ... ersetzt", "fue sobrescrita")."""
    return any(_VERB.search(" ".join(text[aux.end():].split()[:3])) for aux in CUES["passive"].finditer(text))


def _leads_toward(text: str) -> bool:
    """Whether a text starts with a preposition pointing to the new memory ('by', 'with', 'to', 'mit', 'con')."""
    first = re.match(r"^\W*([^\W\d]+)", text)
    return bool(first and _TOWARD.fullmatch(first.group(1)))


def replacement(before: str, between: str, after: str = "") -> bool | None:
    """For two memories quoted one after the other, with ``before`` the words ahead of the first, ``between`` the
    words between them and ``after`` the rest of their clause: True when the first is the old one, False when it is
    the new one, None when the words say nothing of a replacement."""
    verb = change(between)
    if verb:
        if _passive(between) or _BECAME.search(between):
            return True
        return _leads_toward(between[verb.end():])  # "changed to", "replaced by": the first is old
    tail = " ".join(before.split()[-8:])
    if change(tail) or re.search(r"\b(?:from|von)\s*$", tail, re.I):  # "replaced X with Y", "changed from X to Y"
        return True if change(tail) or _TOWARD.search(" ".join(between.split()[:4])) or _BECAME.search(between) \
            else None
    if change(re.split(r"[,;.!?]", after)[0]):  # the verb last: "hat X mit Y überschrieben", "Y hat X ersetzt"
        return _leads_toward(between)
    return None


def label_side(label: str) -> str | None:
    """``"old"`` when a field's label calls its memory the earlier one ("Memory before", "Old value"), ``"new"``
    when it calls it the later one ("After", "New memory"), else None."""
    old, new = CUES["old"].search(label), CUES["new"].search(label)
    return "old" if old and not new else "new" if new and not old else None


_NOUN = re.compile(r"^(?:the\s+|a\s+|its\s+|their\s+)?(?:(?:stored|old|new|existing|previous|earlier|original|"
                   r"compatible|related)\s+)*(?:memory|memories|fact|facts|entry|record|note|unit)\b\s*"
                   r"(?:that\s+says|saying|which\s+said|that|:|,)?\s*", re.I)
_END = re.compile(r"\s*(?:,|;|\.\s|\s(?:although|though|even though|because|since|while|but|so)\s).*$", re.I)


def _statement(text: str) -> str:
    return _END.sub("", _NOUN.sub("", text.strip(" .,;:"))).strip(" .,;:")


def _aux_at_end(text: str) -> re.Match[str] | None:
    """The passive auxiliary a text ends with ('X was', 'X has been', 'X got')."""
    return re.search(r"\s+(?:has\s+been|had\s+been|" + "|".join(sorted(CUES["passive"].words, key=len, reverse=True))
                     + r")(?:\s+\w+ly)?\s*$", text, re.I)


def unquoted_replacement(text: str, is_statement: Callable[[str], bool]) -> tuple[str, str] | None:
    """(old, new) when a sentence says without quotes that one memory replaced another: "X was overwritten by Y",
    "V X with Y" (the verb first), "Y overwrote X"; each side must read as a statement about someone."""
    verbs = sorted([*_VERB.finditer(text), *_ARROW.finditer(text)], key=lambda m: m.start())
    for verb in verbs:  # the first verb of changing that has a memory on each side
        left, right = text[:verb.start()], text[verb.end():]
        by = re.split(rf"\s+(?:{'|'.join(_TOWARD.words)})\s+", right, maxsplit=1, flags=re.I)
        aux = _aux_at_end(left)
        if aux and len(by) == 2:  # "X was overwritten by Y"
            pair = (_statement(left[:aux.start()]), _statement(by[1]))
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
        aux = _aux_at_end(left.split(":")[-1])
        for side in ((_statement(left.split(":")[-1][:aux.start()]),) if aux else ()) + (_statement(right),):
            if is_statement(side):
                return side
    return None
