"""What a yes/no question needs when its gold says yes: the thing it asks about, not the word "yes".

"Do I still have a climbing gym pass?" — "Yes" is held by no memory; the pass is. A right answer needed a memory
that still holds what the question asks about, so that is the piece (`memopt.attribution.need.Piece`) followed
through the graph: a delete that removed it is the loss. What it asks about is a span it quotes
("Is my 'preterite vs imperfect' card still active?"), else its content words without the words of tense and
aspect ("still", "now", "noch"), of them those the evidence uses when it uses some ("Is booking the room for the
Henley offsite still on my to-do list?": room Henley offsite; "Nimmt die Patientin noch Ramipril?": Ramipril).

A question that opens with a question word ("When ...", "Wie viele ...") is not a yes/no question, a gold that
says more than yes ("Yes. She was cleared to run again, but no downhill running") is read as it is, and a gold
that says no is left as it is: what a "no" needs is an absence, which no variable holds. A line that states the
thing and says it is gone (`says_retired`: "T2 Book room for Henley offsite: done", "medikation.ramipril:
GELÖSCHT") does not hold it.
"""

from __future__ import annotations

import re

from memopt.core.text import content_words

__all__ = ["polar_topic", "says_retired"]

_YES = frozenset("yes ja oui si sí sim yep yeah".split())
_ASKING = frozenset("""who whom whose what when where which why how wie was wo wer wann welche welcher welches
    welchen warum wieso wohin woher quel quelle quels quelles quand où qui que quoi comment pourquoi combien qué
    quién quiénes cuándo dónde cuál cuáles cómo cuánto cuántos cuántas por""".split())
_ASPECT = frozenset("""still currently now anymore already yet ever today these days noch immer bereits jetzt
    derzeit aktuell encore toujours déjà todavía aún ainda""".split())
_RETIRED = re.compile(r"\b(?:deleted|removed|gone|suspended|closed|done|completed|cancell?ed|expired|archived|"
                      r"inactive|revoked|discontinued|stopped|dropped|purged|retired|gelöscht|geloescht|abgesetzt|"
                      r"erledigt|entfernt|storniert|supprimée?|terminée?|annulée?|eliminad[oa]|borrad[oa]|"
                      r"cancelad[oa])\b", re.IGNORECASE)
_QUOTED = re.compile(r"['\"‘“„«]([^'\"’”“»]{3,80})['\"’”“»]")
_WORD = re.compile(r"[^\W\d_][\w'-]*")


def polar_topic(question: str, gold: str, said: str = "") -> str | None:
    """The thing a yes/no question asks about when its gold says yes (see the module docstring); None for any
    other question or gold. ``said``: the evidence's text; words it does not use are left out when it uses some
    (the patient never says "Patientin")."""
    answer = _WORD.findall(gold.lower())
    asked = _WORD.findall(question)
    if not answer or answer[0] not in _YES or not asked or asked[0].lower() in _ASKING:
        return None
    if len([w for w in content_words(gold) if w not in _YES and w not in _ASPECT]) > 2:
        return None  # "Yes. She was cleared to run again, but no downhill running": the gold says what is needed
    quoted = _QUOTED.search(question)
    if quoted:
        return quoted.group(1).strip()
    used = set(_WORD.findall(said.lower()))
    found = [w for w in content_words(question) if w not in _ASPECT]
    kept = [w for w in found if w in used] or found
    return " ".join(dict.fromkeys(kept)) or None


def says_retired(line: str) -> bool:
    """Whether a line says the thing it states is gone: deleted, closed, suspended, done, stopped (in English,
    German, French or Spanish): a to-do marked done does not hold that the task is still open."""
    return bool(_RETIRED.search(line))
