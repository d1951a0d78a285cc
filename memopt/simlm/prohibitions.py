"""Predicates that take back their subject: "X is not allowed", "X is not your job", "never delete more than X".

A clause whose subject ends with "is not allowed", "is unnecessary", "are forbidden", "is not to be", "must not
be", "is not your job / responsibility" negates its subject ("guessing is not allowed"); so does one that says
the subject falls short ("X is not enough", "X is insufficient": do more than X) or does harm ("X tends to add
noise", "X hurts recall", "X is bad"); a verdict on "this" or "which" ("..., we lose the date, this is bad") negates
what the sentence said before it. A clause that hands its subject to someone else ("X is handled by a downstream
normaliser", "X is done elsewhere") or keeps it for reading only ("messages from the assistant are context only")
refuses the statement, up to the next comma or conjunction: the instruction is not to do it, whatever the statement
names; so does one that happens elsewhere ("X happens in a later step") or is someone else's concern. A clause
that calls its subject no ground to act ("a shared keyword is not a match", "X is never grounds for deleting")
negates it.
"Never delete more than X", "no more than X" and "delete nothing beyond X" restrict to X: they read as "only X".
"""

from __future__ import annotations

from memopt.simlm.concepts import CONCEPTS
from memopt.simlm.negation import INSTRUCTION_VERBS
from memopt.simlm.words import AUXILIARIES, CLAUSE_PUNCT, COPULAS, GROUND, STOP_PUNCT, Word, with_

__all__ = ["mark_prohibited_subjects", "more_than_as_only", "privative_nothing"]

_PRIVATIVE = frozenset({"forget", "forgets", "forgot", "lose", "loses", "lost", "drop", "drops", "omit", "omits",
                        "miss", "misses", "skip", "skips", "ignore", "ignores", "overlook", "overlooks",
                        "discard", "discards", "leave", "leaves", "neglect", "neglects"})
# verbs whose object a negative quantifier can negate ("abbreviate nothing", "omit no place", "add none of them")
_ACTIONS = ("SHORTEN", "OMIT", "IGNORE", "DELETE", "OVERWRITE", "CONVERT", "PRESERVE", "WRITE", "ADD", "GUESS",
            "COMBINE", "EXPAND", "REMOVE", "INCLUDE", "USE", "CALCULATE", "RESOLVE", "SPARE")
_NOT_VERBS = frozenset({"is", "are", "was", "were", "be", "been", "there", "for", "of", "with", "about", "to", "and",
                        "or", "but", "than", "as", "at", "by", "in", "on", "from", "mean", "means", "says", "said"})

_LIGHT = frozenset({"make", "makes", "do", "does", "take", "takes", "have", "has", "give", "gives", "get", "gets"})


def _verb(word: Word) -> bool:
    """Is ``word`` a verb whose object a negative quantifier can be: an instruction verb or an action of the reader's
    lexicons ("shorten", "paraphrase", "merge")?"""
    if word.quoted or word.text in _NOT_VERBS:
        return False
    if word.text in _PRIVATIVE or word.text in INSTRUCTION_VERBS:
        return True
    return any(CONCEPTS[name].pattern.fullmatch(word.text) for name in _ACTIONS)


def privative_nothing(words: list[Word]) -> list[Word]:
    """A negated object negates its verb: "forgets nothing", "abbreviate nothing", "drop none of the numbers", "omit no
    place", "leave nothing out" read as "never forgets anything", "never omit any place"."""
    out = list(words)
    for i in range(len(out) - 1, 0, -1):
        if out[i].quoted or not _verb(out[i - 1]):
            continue
        follows = out[i + 1].text if i + 1 < len(out) else ""
        # a light verb's "no" names the act ("make no change" is the operation that does nothing)
        quantifier = out[i].text in ("nothing", "none") or out[i].text == "no" and follows not in (
            "longer", "more", "less", "matter", "need", "one", "", ",", ".") and out[i - 1].text not in _LIGHT
        if quantifier and not (i > 1 and out[i - 2].text in ("never", "not", "dont", "no")):
            out[i - 1:i + 1] = [with_(out[i - 1], text="never"), out[i - 1],
                                with_(out[i], text="anything" if out[i].text == "nothing" else "any")]
    return out

_PROHIBITED = frozenset({"forbidden", "prohibited", "disallowed", "unnecessary", "discouraged", "unacceptable",
                         "banned", "non-compliant", "noncompliant", "impermissible", "inadmissible"})
_NO_GO = frozenset({"no-go", "nogo", "no-no", "off-limits", "taboo", "verboten", "non-starter", "nonstarter"})
_DUTY = frozenset({"job", "responsibility", "task", "concern", "role", "business", "duty", "problem"})
_OWNER = frozenset({"your", "our", "my", "the", "a", "part", "within"})
_PERMITTED = frozenset({"allowed", "permitted", "needed", "necessary", "required", "acceptable", "wanted", "desired",
                        "ok", "okay", "advisable", "helpful", "useful", "accepted", "compliant", "appropriate",
                        # falling short: "relying on one memory is not enough" asks for more than it
                        "enough", "sufficient", "adequate"})
_SHORT_OF = frozenset({"insufficient", "inadequate"})
# not enough to act on: "a shared keyword is not a match", "X is never grounds for deleting"
_SUFFICIENT = frozenset({"grounds", "reason", "justification", "basis", "match", "proof", "evidence", "cause"})
# doing harm: "X tends to add noise", "X hurts recall", "X is counterproductive"
_HARM_VERBS = frozenset({"hurt", "hurts", "harm", "harms", "degrade", "degrades", "worsen", "worsens", "backfire",
                         "backfires", "confuse", "confuses", "pollute", "pollutes", "dilute", "dilutes"})
_NOISE = frozenset({"noise", "errors", "distractors", "confusion", "clutter"})
_HARMFUL = frozenset({"harmful", "counterproductive", "risky", "detrimental", "pointless", "wasteful",
                      # worthless: "a fact that has lost its number is useless"
                      "useless", "worthless", "meaningless", "unusable", "unhelpful", "misleading", "dangerous",
                      # a verdict: "dropping the names is bad", "..., we lose the date, this is bad" ("wrong" is
                      # not: "update when the user says the old fact is wrong" describes content)
                      "bad"})
# a fault: "invented answers are a compliance risk", "X is a mistake"
_FAULTS = frozenset({"risk", "liability", "mistake", "hazard", "bug", "error", "failure", "defect", "violation",
                     "fail"})
# verbs that classify their subject as a copula does: "X counts as a failure", "X constitutes a violation"
_CLASSIFY = (("counts", "as"), ("count", "as"), ("constitutes",), ("constitute",), ("amounts", "to"))


def _prohibited(words: list[Word]) -> int:
    """Where a clause ends its subject with "is not allowed", "are forbidden", ... (-1 if it does not)."""
    for i in range(len(words) - 1):
        if words[i].quoted:
            continue
        if words[i].text in AUXILIARIES and [w.text for w in words[i + 1:i + 3]] in (["not", "be"], ["never", "be"]):
            return i
        if words[i].text not in COPULAS:
            continue
        rest = [w.text for w in words[i + 1:i + 3]]
        if rest[:1] and rest[0] in _PROHIBITED or rest[:1] in (["not"], ["never"]) and rest[1:2] and \
                rest[1] in _PERMITTED:
            return i
        if rest[:1] in (["not"], ["never"]) and [w.text for w in words[i + 2:i + 4]] == ["to", "be"]:
            return i
        noun = [w.text for w in words[i + 2:i + 4]]
        if rest[:1] in (["not"], ["never"]) and (noun[:1] and noun[0] in _SUFFICIENT or noun[:1] in (["a"], ["an"],
                                                                                                      ["enough"])
                                                   and noun[1:] and noun[1] in _SUFFICIENT):
            return i
        duty = [w.text for w in words[i + 1:i + 6]]
        if duty[:1] == ["not"] and duty[1:2] and duty[1] in _OWNER and _DUTY & set(duty[2:]):
            return i
        if rest[:1] and (rest[0] in _SHORT_OF or rest[0] in _HARMFUL):
            return i
        verdict = [w.text for w in words[i + 1:i + 4] if w.text not in ("a", "an", "absolute", "total", "hard", "big",
                                                                          "complete", "strict", "definite")]
        if verdict[:1] and verdict[0] in _NO_GO:  # "X is a no-go", "X is off-limits", "X is a hard no"
            return i
        if rest[:1] in (["a"], ["an"]) and _FAULTS & {x.text for x in words[i + 2:i + 4]}:
            return i
    for i in range(1, len(words) - 2):  # "X counts as a fail", "X constitutes a violation"
        verb = next((v for v in _CLASSIFY if tuple(w.text for w in words[i:i + len(v)]) == v), None)
        if verb and not words[i].quoted and _FAULTS & {x.text for x in words[i + len(verb):i + len(verb) + 3]}:
            return i
    return _harmful(words)


def _extraposed(words: list[Word], first: int, copula: int, end: int) -> int | None:
    """Where the real subject starts when a dummy "it" stands for it ("it is not acceptable for a summary to lose a
    name", "it is forbidden to guess"): the "for" or "to" that follows the predicate within three words; else None."""
    if [w.text for w in words[first:copula]] != ["it"]:
        return None
    return next((k for k in range(copula + 2, min(end, copula + 5))
                 if words[k].text in ("for", "to") and not words[k].quoted), None)


def _harmful(words: list[Word]) -> int:
    """Where a subject ends before a predicate of harm ("X tends to add noise", "X hurts recall"), or -1."""
    for i in range(1, len(words)):
        k = i + 2 if [w.text for w in words[i:i + 2]] in (["tends", "to"], ["tend", "to"]) else i
        if words[i].quoted or k >= len(words):
            continue
        verb, obj = words[k].text, [w.text for w in words[k + 1:k + 3]]
        if verb in _HARM_VERBS or verb in ("add", "adds", "introduce", "introduces", "cause", "causes") and \
                _NOISE & set(obj):
            return i
    return -1










def _participle(word: str) -> bool:
    """A past participle ("converted", "resolved", "taken"), roughly."""
    return len(word) > 4 and (word.endswith("ed") or word in ("done", "taken", "written", "given", "made"))






_ANAPHORIC = frozenset({"this", "that", "which"})
_CLAUSE_LINKS = frozenset({"because", "since", "so", "but", "however", "although", "though", "while", "whereas"})
_NOTHING_BUT = (("beyond",), ("but",), ("except",), ("other", "than"), ("more", "than"), ("apart", "from"))


def more_than_as_only(words: list[Word]) -> list[Word]:
    """"Never delete more than one memory", "no more than three", "delete nothing beyond the retracted memory"
    restrict, they do not negate: read them as "only"."""
    out = list(words)
    for i in range(len(out) - 2, -1, -1):
        if out[i].text == "nothing" and not out[i].quoted:
            for tail in _NOTHING_BUT:
                if tuple(w.text for w in out[i + 1:i + 1 + len(tail)]) == tail:
                    out[i:i + 1 + len(tail)] = [with_(out[i], text="only")]
                    break
            continue
        if out[i].text != "more" or out[i + 1].text != "than" or out[i].quoted:
            continue
        for j in (i - 1, i - 2):
            if j >= 0 and out[j].text in ("not", "never", "no") and not out[j].quoted and \
                    all(w.text not in STOP_PUNCT and w.text != "," for w in out[j + 1:i]):
                out[i:i + 2] = [with_(out[i], text="only")]
                del out[j]
                break
    return out



def mark_prohibited_subjects(words: list[Word]) -> list[Word]:
    """Put the subject of each prohibiting predicate ("X is not to be added") under a negation scope."""
    out = list(words)
    scope_id = max((w.scope for w in out), default=0)
    start = 0
    for end in [k for k, w in enumerate(out) if w.text in CLAUSE_PUNCT and w.text not in "()"] + [len(out)]:
        subject = _prohibited(out[start:end])
        if subject > 0:
            scope_id += 1
            # a predicate of harm can end the clause ("... and someone gets hurt"): nothing follows it
            negation = start + subject + 1 < end and out[start + subject + 1].text in ("not", "never")
            # one negation: the subject shares the scope of the predicate it negates ("X is not to be added")
            shared = out[start + subject + 2].scope if negation and start + subject + 2 < end else 0
            first = start + subject
            while first > start and out[first - 1].text != "," and (out[first - 1].text not in _CLAUSE_LINKS or (
                    first > start + 1 and out[first - 2].text in GROUND)):
                first -= 1  # the subject starts after a comma or a linking conjunction ("..., because X is useless");
                # "just because" is inside it ("dropping a fact just because a guest said it is a bug")
            # "the answer shall use every item and shall not be confined to one": a subject has no verb of its own,
            # so an earlier modal starts a coordinated predicate the negation does not reach
            last = next((k for k in range(first, start + subject) if out[k].text in AUXILIARIES and not out[k].quoted),
                        start + subject)
            for k in range(first, last):
                if not out[k].scope:
                    out[k] = with_(out[k], scope=shared or scope_id)
            if _ANAPHORIC & {out[first].text} and last == first + 1 and first > 0:
                # "if you cut it, we lose the date, this is bad": the verdict is on what the sentence said before it
                for k in range(first - 1, -1, -1):
                    if out[k].text in STOP_PUNCT:
                        break
                    if not out[k].scope:
                        out[k] = with_(out[k], scope=shared or scope_id)
            if (clause := _extraposed(out, first, start + subject, end)) is not None:
                # "it is not acceptable for a fact to leave out names": the clause after the predicate is the subject
                for k in range(clause, end):
                    out[k] = with_(out[k], scope=shared or scope_id, contrast=False)
                start = end + 1
                continue
            after = start + subject + 3
            infinitive = start + subject + 2 < end and out[start + subject + 2].text in ("to", "be") or \
                after < end and out[after].text == "to"
            # "X is not a reason to delete Y": the act stays negated, on the ground X
            ground = _SUFFICIENT & {w.text for w in out[start + subject + 2:start + subject + 4]}
            if negation and not infinitive and not ground:
                for k in range(start + subject + 2, end):
                    out[k] = with_(out[k], scope=0, contrast=False)
        start = end + 1
    return out
