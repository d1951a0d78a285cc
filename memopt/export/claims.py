"""The prescriptions one clause of a prompt makes (`Claim`), read by `memopt.export.reading`.

`prescriptions(text, target, antecedent)` reads a clause (lowercased, its quotes replaced by what they stand for) as

- **choices**: one value of a dimension of `memopt.export.lexicon.CHOICES` (JSON, ISO dates, the question's
  language, the newest memory, ...), or its refusal when the words before it negate it (`negated`: an odd number of
  negations and negative verbs in its part of the clause, so "never fail to cite" is a positive);
- **memory operations**: ADD / UPDATE / DELETE / NONE, as capitals, as verbs on a memory ("delete the old memory"),
  passives ("memories are never deleted"), "leave it unchanged", "append-only";
- **speakers**: both speakers, one of them, or one refused;
- **objects kept or left out**: an include verb or a negative verb and what it governs ("never record dates",
  "skip greetings such as hello"), "them" taken from the clause before.

Lengths and counts are read in `memopt.export.quantities`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from memopt.core.text import STOPWORDS, stem
from memopt.export import lexicon as lx

__all__ = ["Claim", "Situation", "WORD", "negated", "target", "prescriptions"]

Situation = frozenset[str]  # concept tokens ("@absent") and stems of a condition's other words
WORD = re.compile(r"[a-z@][a-z0-9@'-]*")

@dataclass(frozen=True)
class Claim:
    """One prescription: a value of a dimension (``positive`` False: refused), for a target, about objects."""

    dim: str
    value: str
    positive: bool = True
    target: str = "output"  # "output", "item" (each fact / entry), "field:<name>", "part:<words>"
    objects: tuple[Situation, ...] = ()  # what the rule keeps or leaves out; empty: everything
    lo: float = 0.0  # length (1 one word .. 5 long) or count range
    hi: float = math.inf
    said: str = ""  # the words that made it, for the report


_VERBS = frozenset("use write give reply answer return respond output record keep include add say state put make "
                   "prefer choose start begin store extract list".split())


_ANSWER_LABELS = re.compile(r"\b(?:yes|qyes)\W*(?:or\W+|/|-)\W*(?:no|qno)\b")


def negated(before: str) -> bool:
    """Whether the words before a match, in its part of the clause, refuse it ("do not simplify, paraphrase, or
    merge": a list continues its part)."""
    parts = re.split(r"[,;:]|\b(?:but|then|instead|so that|rather)\b", before)
    part = parts.pop()
    while parts and (not (item := re.sub(r"\b(?:or|and|nor)\b", " ", part).split()) or len(item) == 1 and
                     item[0] not in _VERBS):
        part = parts.pop() + ", " + part
    part = _ANSWER_LABELS.sub(" ", part)  # the "no" of "yes/no questions" names an answer, it negates nothing
    flips = len(lx.NEGATION.findall(part)) + len(lx.NEGATIVE_VERB.findall(part))
    flips -= len(re.findall(r"\bnever (?:fail|forget)\b|\b(?:do not|don't) forget\b", part))
    return flips % 2 == 1


def target(text: str, raw: str) -> str:
    fld = re.search(r"\b(?:the |an? )?\W?(\w+)\W? (?:field|key|property|column)\b|\b(?:field|"
                    r"key) \W?(\w+)", raw.lower())
    if fld and fld[1] not in ("json", "a", "the", "one", "each", "every", "output"):
        return f"field:{fld[1] or fld[2]}"
    part = re.search(r"\b(?:the |a |each )?(?:summary'?s? )?(title|heading|headline|first line|last line|body|"
                     r"separate (?:bullet(?:ed)? )?list|list of (?!strings|facts|entries|memories|operations|events)"
                     r"\w+|after the (?:summary|answer|paragraph))\b", text)
    if part:
        return "part:" + part[1].split()[0]
    if re.search(r"\b(?:each|every|a single|one|an?) (?:atomic )?(?:fact|entry|string|item|bullet|line|memory|"
                 r"element)\b(?! per\b)|^(?:facts|entries|items|bullets|strings) (?:must|should|are|have|need)\b|"
                 r"\binside (?:a|"
                 r"each|the) fact\b", text):
        return "item"
    return "output"


# --- memory operations, speakers, objects ---------------------------------------------------------------------------
_OP_OF_VERB = {"add": "ADD", "insert": "ADD", "create": "ADD", "update": "UPDATE", "modify": "UPDATE",
               "change": "UPDATE", "edit": "UPDATE", "overwrite": "UPDATE", "rewrite": "UPDATE", "alter": "UPDATE",
               "merge": "UPDATE", "delete": "DELETE", "remove": "DELETE", "erase": "DELETE", "forget": "DELETE",
               "discard": "DELETE", "drop": "DELETE"}
_OP_VERB = re.compile(r"\b(?P<v>add|insert|create|update|modify|change|edit|overwrite|rewrite|alter|delete|remove|"
                      r"erase|forget|discard|drop)(?:s|d|ed|ing)?\b(?:\s+(?:or|and)\s+(?P<v2>update|modify|delete|"
                      r"remove|change|edit|overwrite)\w*)?\s+(?P<o>it\b|them\b|(?:(?:the|that|this|an?|any|existing|"
                      r"stored|old|older|matching|its|every|all|previous|current|outdated|original|same)\s+)+(?:\w+\s+)"
                      r"{0,2}?(?:memor(?:y|ies)|entry|entries|element|record)s?\b|memor(?:y|ies)\b)")
_OP_PASSIVE = re.compile(r"\bmemor(?:y|ies)\s+(?:\w+\s+){0,2}?(?:must|should|shall|are to|is to|will|may|can)?\s*"
                         r"(?:never |not |always )?(?:be|get|are|is)\s+(?P<v>deleted|removed|updated|modified|changed|"
                         r"overwritten|added|erased|edited)\b")
_OP_NONE = re.compile(r"\bleave (?:it|them|the memory|the memories|memories|the store|that memory)\s+(?:unchanged|"
                      r"alone|"
                      r"untouched|as (?:it is|they are))\b|\bmake no changes?\b|\bdo nothing\b|\bno change\b")
_APPEND_ONLY = re.compile(r"\bappend[- ]only\b|\bimmutable\b|\bread[- ]only\b")
_EMBEDDED = re.compile(r"\b(?:how|whether|what|which)\b[^,;]*$")
_OP_TOKEN = re.compile(r"\bop(add|update|delete|none)\b")
_SPEAKER_BOTH = re.compile(r"\bboth (?:speakers|participants|people|persons|parties|sides|users|of them)\b|\beach "
                           r"(?:speaker|participant|person)\b|\bevery (?:speaker|participant|person in the "
                           r"(?:conversation|dialogue))\b|\ball (?:speakers|participants)\b|\bnot (?:just|only|merely|"
                           r"solely) (?:about |from |on |for )?(?:the )?(?:user|first speaker|speaker a)\b|"
                           r"\bfrom either speaker\b|\bequally\b")
_SPEAKER_ONE = re.compile(r"\b(?:only|solely|exclusively)\b(?: [\w']+){0,6}? (?:the )?(?P<who>user|first speaker|"
                          r"second "
                          r"speaker|speaker a|speaker b|speaker 1|speaker 2)\b|\b(?:the )?(?P<who2>user)'?s? messages "
                          r"only\b|\bbased (?:only |solely |exclusively )?on the (?P<who3>user)'?s?\b(?! and)")
_SPEAKER = re.compile(r"\b(?:the )?(?P<who>first speaker|second speaker|other speaker|speaker a|speaker b|speaker 1|"
                      r"speaker 2)\b")
_WHO = {"user": "first", "first speaker": "first", "speaker a": "first", "speaker 1": "first",
        "second speaker": "second", "speaker b": "second", "speaker 2": "second", "other speaker": "second"}
_OBJECT_STOP = re.compile(r"[,;:()]|\b(?:that|which|who|as|with|by|using|into|instead|like|such as|e\.g|for example|"
                          r"including|so that|"
                          r"so|because|then|but|when|if|unless|while|whenever|even|only|unchanged|exactly|in (?:the )?"
                          r"(?:same|plain|json|english|past|present|third|first|one|a single|full|bullet|order|"
                          r"your|their))\b")
_EXAMPLES = re.compile(r"\b(?:such as|like|e\.g\.?|for example|for instance|including)\b(?P<list>[^;]*)")
_PRONOUN = re.compile(r"^\s*(?:them|it|these|those|this|that|they)\b")
_NOT_A = re.compile(r"^(?P<subj>.{3,80}?) (?:are|is) not (?:facts|memories|worth (?:recording|remembering|storing|"
                    r"keeping|noting))\b")
_NAMING = ((re.compile(r"\brefer\w* to (?:\w+ ){0,3}by (?:their |first |full )?names?\b|\bname (?:the|both|each|every) "
                       r"(?:speakers?|people|persons?|participants?)\b|\bcall (?:\w+ ){0,2}by (?:their )?names?\b"),
            True),
           (re.compile(r"\b(?:refer\w* to|call|address|describe)\w* (?:\w+ ){0,3}(?:only )?as qanon\b|\bqanon\b "
                       r"instead\b|\binstead of (?:their |the )?names?\b|\banonymi[sz]\w*|\bpronouns instead\b|"
                       r"\bwithout (?:their |any )?names?\b"), False))
_EXCLUSIVE_OUTPUT = re.compile(r"\bnothing (?:else|but)\b|\bonly the answer\b|\bjust the answer\b|\bbare answer\b|"
                               r"\banswer itself\b|\bno (?:other|additional|extra) (?:text|words|comments?)\b")


def _items(text: str) -> list[Situation]:
    out = []
    for part in re.split(r",|\band\b|\bor\b|/|\bnor\b", text):
        concepts = set()
        for name, pattern in lx.OBJECT_CONCEPTS:
            if re.search(pattern, part):
                concepts.add(name)
                part = re.sub(pattern, " ", part)
        stems = {stem(w.strip("'")) for w in WORD.findall(part.replace("'s ", " ")) if w.strip("'") not in STOPWORDS
                 and w.strip("'") not in lx.GENERIC and not re.match(r"^(?:q[a-z]+|op[a-z]+|any\w+|some\w+|every\w+|"
                                                                     r"no\w*one|@.*)$", w)}
        if concepts or stems:
            out.append(frozenset(concepts | stems))
    return out


def _objects(after: str) -> tuple[Situation, ...]:
    """What a verb's object names: its items, and the items of its "such as" examples."""
    stop = _OBJECT_STOP.search(after)
    main = after[:stop.start()] if stop else after
    items = _items(main)
    if stop and stop[0] in ("that", "which", "who") and items:  # "small talk that reveals a plan" is narrower
        rest = after[stop.end():]
        end = re.search(r"[,;:()]|\b(?:such as|like|e\.g|for example|including)\b", rest)
        qualifier = _items(rest[:end.start()] if end else rest)
        items[-1] = items[-1].union(*qualifier)
    ex = _EXAMPLES.search(after)
    if ex:
        items += _items(ex["list"])
    return tuple(items)


def _ops(text: str) -> list[Claim]:
    found: list[tuple[int, str, bool]] = []
    tokens = list(_OP_TOKEN.finditer(text))
    if len(tokens) < 3 and not re.search(r"\b(?:whether to|decide between|choose between|one of)\b", text) and \
            not (tokens and _EMBEDDED.search(text[:tokens[0].start()])):
        found += [(m.start(), m[1].upper(), not negated(text[:m.start()])) for m in tokens]
    for m in _OP_VERB.finditer(text):
        if _EMBEDDED.search(text[:m.start()]):
            continue  # "decide how a fact should change the memory": a question, not a rule
        if m["o"] in ("it", "them") and m["v"] in ("drop", "discard", "forget", "remove", "create", "insert") or \
                m["v"] in ("change", "create") and m["o"] in ("it", "them"):
            continue
        for verb in filter(None, (m["v"], m["v2"])):
            found.append((m.start(), _OP_OF_VERB[re.sub(r"(?:s|d|ed|ing)$", "", verb) if verb not in _OP_OF_VERB
                                                   else verb], not negated(text[:m.start()])))
    for m in _OP_PASSIVE.finditer(text):
        verb = m["v"][:-1] if m["v"].endswith("ed") and m["v"][:-1] in _OP_OF_VERB else m["v"][:-2]
        positive = not negated(text[:m.start()] + " " + text[m.start():m.start("v")])
        found.append((m.start(), _OP_OF_VERB.get(verb, "UPDATE"), positive))
    for m in _OP_NONE.finditer(text):
        found.append((m.start(), "NONE", not negated(text[:m.start()])))
    if _APPEND_ONLY.search(text):
        found += [(0, "UPDATE", False), (0, "DELETE", False)]
    positive = sorted({op for _, op, p in found if p})
    claims = [Claim("op", op, False, said=f"never {op}") for op in sorted({op for _, op, p in found if not p})]
    if positive:
        claims.append(Claim("op", "+".join(positive), True, said=" and ".join(positive)))
    return claims


def _speakers(text: str) -> list[Claim]:
    out = []
    for both in _SPEAKER_BOTH.finditer(text):
        if not negated(text[:both.start()]):
            out.append(Claim("speakers", "both", True, said=both[0]))
            break
    text = _SPEAKER_BOTH.sub(" ", text)
    one = _SPEAKER_ONE.search(text)
    if one:
        who = one["who"] or one["who2"] or one["who3"]
        out.append(Claim("speakers", _WHO[who], True, said=one[0]))
        text = text.replace(one[0], " ")
    for m in _SPEAKER.finditer(text):
        if negated(text[:m.start()]):
            out.append(Claim("speakers", _WHO[m["who"]], False, said=m[0]))
    return out


_IMPERATIVE = re.compile(r"(?:^|[,;:]\s*|\b(?:never|not|don'?t|do|must|should|shall|always|to|and|or|also|only|then|"
                         r"please|explicitly|carefully|still|instead|you|will|cannot|can'?t|nor|strictly|first|"
                         r"simply|just|each time|now|actively|mustn'?t|shouldn'?t)\s+)$")


def _includes(text: str, target: str, antecedent: tuple[Situation, ...]) -> list[Claim]:
    out = []
    m = _NOT_A.match(text)
    if m:
        out.append(Claim("include", "object", False, target, _items(m["subj"]), said=m[0]))
    for pattern, positive in _NAMING:
        n = pattern.search(text)
        if n:
            out.append(Claim("include", "object", positive != negated(text[:n.start()]), target,
                             (frozenset({"@name"}),), said=n[0]))
    verbs = sorted([(v.start(), v.end(), False, v[0]) for v in lx.NEGATIVE_VERB.finditer(text)] +
                   [(v.start(), v.end(), True, v[0]) for v in lx.INCLUDE_VERB.finditer(text)])
    taken = -1
    for start, end, positive, said in verbs:
        if start < taken or not _IMPERATIVE.search(text[:start]):
            continue  # a noun ("a time reference") or a verb of a subordinate clause
        after = text[end:]
        if not positive and re.match(r"\s*(?:(?:the|that|this|an?|any|old|existing|stored)\s+)*(?:\w+\s+)?memor",
                                     after):
            continue  # "remove the memory": a memory operation
        if not positive:  # "leave ... out", "keep ... out": the object sits inside
            inner = re.match(r"\w+ (?P<o>.*) out\b", said)
            after = (inner["o"] + " " + after) if inner else after
        objects = antecedent if _PRONOUN.match(after) else _objects(after)
        if said.startswith("name") and positive is not False:
            objects = objects + (frozenset({"@name"}),)
        if said.startswith("cite"):
            objects = objects + (frozenset({"@source"}),)
        taken = end
        if objects:
            before = text[:start]
            out.append(Claim("include", "object", positive != negated(before), target, objects, said=f"{said}"
                                                                                                          f"{after[:40]}"))
    return out


_NEEDS = {"numbers": r"\b(?:numbers?|numerals?|digits?|amounts?|figures?|quantit\w+|counts?)\b",
          "date-format": r"\bdates?\b|\bformat"}  # a dimension read only when its subject is named


def _choices(text: str, target: str) -> list[Claim]:
    out = []
    for dim, values in lx.CHOICES.items():
        if dim in _NEEDS and not re.search(_NEEDS[dim], text):
            continue
        for value, pattern in values.items():
            m = re.search(pattern, text)
            if m:
                objects = _objects(text[m.end():]) if dim == "missing" and value == "guess" else ()
                out.append(Claim(dim, value, not negated(text[:m.start()]), target, objects, said=m[0]))
    if _EXCLUSIVE_OUTPUT.search(text) or any(c.dim == "bare-yesno" and c.positive for c in out):
        out.append(Claim("reasoning", "reasoning", False, target, said="nothing else"))
    return out



def prescriptions(text: str, target: str, antecedent: tuple[Situation, ...] = ()) -> list[Claim]:
    """The choices, memory operations, speakers and objects a clause prescribes (see the module docstring)."""
    return _choices(text, target) + _ops(text) + _speakers(text) + _includes(text, target, antecedent)
