"""Rules of one prompt that prescribe different actions for one condition: which one would the model follow?

`contradictions(text)` reads each rule of a prompt as the actions it prescribes (`ACTIONS`: what an answer,
an entry or an operation must be: one word or full sentences, JSON or plain prose, ISO or spelled-out dates,
"not mentioned" or a best guess, UPDATE or never modify, ...) and the condition it applies under ("if the
memories do not contain the answer", "for yes/no questions", a relative clause such as "a memory that has
become outdated"). Two rules conflict when they prescribe actions `OPPOSED` to each other (or one rule does what
the other forbids, or their word limits cannot both hold) for the same condition:

- neither has a condition, or one applies everywhere ("always", "every", "even when", "including") and so
  covers the other's;
- both have one, and the conditions are alike (the same words, once synonyms are made one, and the same
  polarity: "do not contain the answer" is not "contain partial information").

No conflict is found when a rule states an exception or a priority ("except", "unless", "exception:",
"otherwise", "all other questions"), when the two rules sit in sections of different operations (an extract step
and an answer step), or when one of them is about a named field or a part of the output ("the reason field",
"a bullet list of plans").

It depends on no reader of instructions: its vocabulary is this module's own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memopt.core.text import STOPWORDS, stem, words

__all__ = ["ACTIONS", "OPPOSED", "Rule", "read_rule", "contradictions"]

_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                 "nine": 9, "ten": 10, "twelve": 12, "twenty": 20, "fifty": 50, "hundred": 100}
_NEG = r"(?:never|do not|don't|does not|must not|should not|no longer|not|avoid|without|nor)"

# An action: a name and what says it (lowercased text). A name ending in "-not" is the refusal of the action.
ACTIONS: dict[str, str] = {
    "abstain": r"not mentioned|i don't know|(?:say|reply|answer|respond) (?:that )?(?:it is |the (?:answer|"
               r"information) is )?(?:unknown|not (?:available|known|in the memories))|decline to answer|abstain",
    "guess": r"best guess|(?:always|never fail to) (?:give|provide) (?:an? )?(?:answer|guess)|make a guess|"
             r"guess\b|never (?:reply|say|answer) \"?not mentioned|never (?:abstain|decline)",
    "one-word": r"\b(?:in |with )?(?:one|a single) word\b|\bone-word\b",
    "sentences": r"\bfull sentences?\b|\bcomplete sentences?\b|\bwhole sentences?\b",
    "reasoning": r"explain (?:your |the )?reasoning|show (?:your |the )?(?:reasoning|work)|step by step|"
                 r"justify (?:your|the|each)|with (?:an? )?explanation",
    "brief": r"\b(?:short|brief|briefly|concise|concisely|succinct)\b|\ba (?:short )?phrase\b|\bfew words\b",
    "detailed": r"\bin (?:full |great )?detail\b|\bdetailed (?:answers?|summar\w*|descriptions?|responses?|"
                r"accounts?|explanations?)\b|\bbe detailed\b|\bdescribe every\b|\bexhaustive(?:ly)?\b",
    "json": r"\bjson\b|\{\s*\"",
    "json-not": rf"{_NEG} (?:\w+ ){{0,4}}(?:in |as |use |with )?json|no json|plain (?:prose|text|bulleted list|"
                r"list|sentences)|bulleted list|bullet list|markdown list",
    "label-only": r"only the (?:operation|event|decision) (?:name|label|word)|(?:operation|event) name[^.]{0,40}"
                  r"nothing else|only (?:add|update|delete|none)\b",
    "iso": r"\biso\b|yyyy-mm-dd|\b\d{4}-\d{2}-\d{2}\b",
    "spelled-date": r"day,? month(?: name)?,? (?:and )?year|\"\d{1,2} (?:january|february|march|april|may|june|july|"
                    r"august|september|october|november|december) \d{4}\"|month name|dd/mm/yyyy|day-month-year",
    "resolve": r"resolve[sd]? (?:the |any |all |every )?(?:relative )?(?:date|time|expression)|write the resolved|"
               r"resolved date|convert (?:relative|time expressions)|turn (?:relative|time) [^.]{0,30} into (?:a |"
               r"an? absolute )?dates?",
    "resolve-not": rf"keep (?:time expressions|relative (?:dates|times|expressions))[^.]{{0,20}}as (?:spoken|"
                   rf"written|said)|{_NEG} (?:\w+ ){{0,3}}(?:resolve|convert|turn)[^.]{{0,40}}into (?:a |an )?dates?",
    "dates": r"\b(?:begin|start) (?:\w+ ){0,2}with the (?:session )?date|\binclude (?:the )?(?:session )?dates?|"
             r"\bstate the date|\bwith the (?:calendar )?date\b|\bcompute the date\b|\bcalendar date\b",
    "dates-not": rf"{_NEG} (?:\w+ ){{0,3}}(?:include|state|mention|give|use)[^.]{{0,20}}(?:any )?(?:specific )?"
                 rf"(?:calendar )?dates?|no dates",
    "duration": r"\bwith a duration\b|\bas a duration\b|\bdescribe time (?:only )?relatively\b|\brelative terms\b|"
                r"\bhow long ago\b[^.]{0,40}\bduration",
    "both-speakers": r"\bboth speakers\b|\bboth participants\b|\beach speaker\b|\bevery speaker\b|\bboth people\b|"
                     r"\bnot (?:just|only) the user\b",
    "one-speaker": r"\bonly (?:extract |record |keep )?(?:facts )?(?:about |from |of )?the (?:first|second) speaker|"
                   r"\bonly (?:about |from )?the user\b|never record anything about the (?:second|other) speaker|"
                   r"\b(?:solely|only) (?:based )?on the user'?s? messages\b|\bbased on the user messages only\b",
    "names": r"\bname the speakers\b|\buse (?:their|the speakers'?) (?:first )?names\b|\bby (?:their )?names?\b",
    "names-not": rf"{_NEG} (?:\w+ ){{0,2}}use (?:their|the speakers'?) names|\"speaker a\"|anonymi[sz]e",
    "question-language": r"language (?:the question is (?:written|asked) in|of the question)|same language as the "
                         r"question|question's language",
    "english": r"\balways (?:answer|reply|respond|write) in english\b|\bonly in english\b|\bin english,? whatever\b|"
               r"\benglish only\b",
    "earliest": r"\bearliest\b|\boldest\b|\bfirst mention\b",
    "latest": r"\bmost recent\b|\blatest\b|\bnewest\b|\blast mention\b",
    "yes-no-only": r"(?:answer|reply|respond) (?:only )?(?:with )?\"?yes\"? or \"?no\"?(?: only| and nothing else)|"
                   r"only (?:\"?yes\"? or \"?no\"?)",
    "yes-no-not": rf"{_NEG} (?:\w+ ){{0,3}}(?:a )?bare \"?yes\"? or \"?no\"?|never (?:just|only) \"?yes\"? or \"?no\"?",
    "digits": r"\b(?:as|in|with|use) (?:digits|numerals)\b|\bnumbers as digits\b",
    "number-words": r"\b(?:spell out|spelled out) (?:all )?numbers\b|\bnumbers (?:as|in) words\b",
    "cite": r"\bcite\b|\binclude (?:the )?(?:memory )?ids?\b|\b(?:mention|name|give) (?:the )?sources?\b|"
            r"\breference the memor",
    "cite-not": rf"{_NEG} (?:\w+ ){{0,3}}(?:cite|mention|name|include|reference)[^.]{{0,20}}(?:sources?|ids?|"
                rf"memor(?:y|ies) ids?)",
    "empty": r"return (?:an )?empty (?:list|array)|\{\s*\"facts\"\s*:\s*\[\s*\]\s*\}|(?:return|output) nothing",
    "empty-not": rf"{_NEG} (?:\w+ ){{0,2}}return (?:an )?empty|always (?:return|extract|output) at least one",
    "update": r"\bupdate (?:that|the|this|it|an existing) memor|\bthe operation is update\b|\boperation update\b|"
              r"\b(?:is|use|choose|emit) update\b|\bupdate\b(?= that memory| it\b)",
    "update-not": rf"{_NEG} (?:(?!need\b)\w+ ){{0,2}}(?:modify|change|update|overwrite|edit|touch) (?:an? |the )?"
                  rf"(?:existing |stored )?memor",
    "delete-add": r"\bdelete (?:that|the|this) memory and add\b|\bdelete\b[^.]{0,30}\band add\b",
    "keep-id": r"\bkeep (?:that |the |this )?(?:memory's )?id\b|\bsame id\b|\breuse the id\b|\bits id unchanged\b",
    "new-id": r"\b(?:fresh|new) id\b|\bgenerate (?:a )?new id\b",
    "skip-speculation": r"(?:speculat|hypothetic|maybe|might)[^.]{0,60}(?:not facts|skip|leave (?:them )?out|ignore)|"
                        r"(?:skip|leave out|ignore|do not record|don't record)[^.]{0,30}(?:speculat|hypothetic|"
                        r"\"maybe|\"might)",
    "record-speculation": r"record (?:every|all|each) (?:\"?maybe\"?|speculat|hypothetic)|(?:maybe|might)\"? "
                          r"statements? as (?:a )?facts?",
    "one-operation": r"\bexactly one operation\b|\ba single operation\b|\bone operation (?:only|per fact)\b",
    "many-operations": r"\bone operation for each\b|\ba list (?:of|with) [^.]{0,20}operations?\b|"
                       r"\bseveral operations\b",
    "limit": r"\b(?:at most|no more than|up to|maximum of) (?:\d+|one|two|three|four|five|six|seven|eight|nine|ten) "
             r"(?:entries|facts|items|memories|bullets)\b",
    "all-facts": r"\bevery fact\b[^.]{0,40}\b(?:no matter|never leave)|\bnever leave (?:one|any) out\b|\ball facts,? "
                 r"no matter how many\b|\bno matter how many\b",
    "one-query": r"\bonly the query\b|\bone query\b|\ba single query\b|\bon a single line\b|\bsingle-line\b",
    "many-queries": r"\b(?:two|three|four|five|several|multiple|\d+) (?:alternative |different )?queries\b",
    "past": r"\bpast tense\b",
    "present": r"\bpresent tense\b",
    "third-person": r"\bthird person\b",
    "first-person": r"\bfirst person\b|\bas the speaker would say it\b",
}
OPPOSED = {frozenset(pair) for pair in (
    ("abstain", "guess"), ("one-word", "sentences"), ("one-word", "reasoning"), ("one-word", "detailed"),
    ("brief", "detailed"), ("brief", "reasoning"), ("json", "json-not"), ("json", "label-only"),
    ("iso", "spelled-date"),
    ("resolve", "resolve-not"), ("dates", "dates-not"), ("dates", "duration"), ("both-speakers", "one-speaker"),
    ("names", "names-not"), ("question-language", "english"), ("earliest", "latest"), ("yes-no-only", "yes-no-not"),
    ("yes-no-only", "reasoning"), ("digits", "number-words"), ("cite", "cite-not"), ("empty", "empty-not"),
    ("update", "update-not"), ("update", "delete-add"), ("keep-id", "new-id"),
    ("skip-speculation", "record-speculation"), ("one-operation", "many-operations"), ("limit", "all-facts"),
    ("one-query", "many-queries"), ("past", "present"), ("third-person", "first-person"))}
_COMPILED = {name: re.compile(pattern) for name, pattern in ACTIONS.items()}
_REFUSED = {name[: -len("-not")] for name in ACTIONS if name.endswith("-not")}

_OPTIONS = re.compile(r"^(?:example\b|e\.g\.|for example\b|for instance\b|(?:\(?\w\)\s*|\d\.\s*)?(?:add|update|"
                      r"delete|none|no change|noop)\s*:)|\byou (?:can|may|could) "
                      r"(?:perform|choose|use|pick)\b")  # an example, an option, an operation's definition ("UPDATE: ")
_EXCEPTION = re.compile(r"\b(?:except|unless|exception|otherwise|apart from|other than|instead of|but not)\b|"
                        r"\ball other\b|\bother questions\b|\bany other\b")
_COVERS = re.compile(r"\b(?:always|every|whatever|regardless|no matter|even (?:when|if|for|though)|including|"
                     r"all (?:questions|answers|entries|facts|cases|dates|memories)|any question)\b")
_CONDITION = re.compile(r"\b(?:if|when|whenever|once|where)\b[^,;.]*|\bfor (?!example|instance|each of them)"
                        r"[^,;.]{0,80}?(?=,)|\bfor (?:\"[^\"]+\" |[\w/'-]+ ){0,4}?(?:questions?|answers?|facts?|"
                        r"memories|entries|dates|events|requests|cases|speakers?|items|people|topics)\b[^,;.]*|"
                        r"\b(?:that|which|who) (?:has|have|is|are|was|were|become|became)\b[^,;.]*|"
                        r"\bonly (?:when|if|for)\b[^,;.]*")
_WIDEN = re.compile(r"\beven (?:when|if|for|though)\b[^,;.]*|\bincluding\b[^,;.]*|\bregardless\b[^,;.]*|"
                    r"\bwhatever\b[^,;.]*|\bno matter\b[^,;.]*")
_FIELD = re.compile(r"\b(?:the )?\"?\w+\"? (?:field|key|property)\b|\bfield \"\w+\"|\b(?:a|the) (?:separate |"
                    r"bullet(?:ed)? )?list of (?!strings|facts|entries|memories|operations)\w+|\bafter the (?:summary|"
                    r"answer|paragraph)\b")
_UPPER = re.compile(r"\b(?:under|at most|no more than|maximum of|up to|fewer than|less than|below|within) "
                    r"(?P<n>\d+|\w+) (?P<unit>words?|sentences?|entries|facts|items|characters|lines|bullets)\b")
_LOWER = re.compile(r"\b(?:at least|no fewer than|minimum of|more than|over) (?P<n>\d+|\w+) "
                    r"(?P<unit>words?|sentences?|entries|facts|items|characters|lines|bullets)\b")
_SYNONYMS = {"contradict": "chang", "conflict": "chang", "correct": "chang", "replac": "chang", "updat": "chang",
             "outdat": "old", "supersed": "old", "refin": "refin", "cover": "contain", "includ": "contain",
             "hold": "contain", "answer": "contain", "mention": "contain", "say": "contain", "retract": "retract",
             "withdraw": "retract"}
_ABSENT = {"lack", "miss", "silent", "noth", "absent", "unanswer", "unknown", "empti"}  # "nothing ... answers" is
# "does not contain": read as a negated "contain"
_HEADING = re.compile(r"^\s*(?:#{1,6}\s*(?P<h>.+)|(?P<s>(?:step|stage|part|phase)\s*\d+\b.*)|"
                      r"(?P<c>[A-Z][^.!?]{0,60}):)\s*$", re.IGNORECASE)
_OPERATIONS = {"extract": "extract", "extraction": "extract", "answer": "answer", "answering": "answer",
               "update": "update", "summar": "summarize", "summary": "summarize", "query": "query",
               "rewrite": "query", "retriev": "query", "search": "query"}


@dataclass(frozen=True)
class Rule:
    """One sentence read as a rule: the actions it prescribes, its condition, where it sits."""

    text: str
    actions: frozenset[str]
    condition: frozenset[str]
    negated_condition: bool
    covers: bool
    excepts: bool
    scoped: bool
    section: str | None
    upper: dict[str, int]
    lower: dict[str, int]


def _count(token: str) -> int | None:
    return int(token) if token.isdigit() else _NUMBER_WORDS.get(token.lower())


def _unit(unit: str) -> str:
    return unit.rstrip("s") if not unit.endswith("ies") else unit[:-3] + "y"


def _negated_at(low: str, start: int) -> bool:
    clause = re.split(r"[;:.!?]|\b(?:but|then|and)\b", low[:start])[-1]
    return bool(re.search(rf"\b{_NEG}\b", " ".join(clause.split()[-5:])))


def read_rule(sentence: str, section: str | None = None) -> Rule:
    """What a sentence prescribes, under which condition (see the module docstring)."""
    low = " ".join(sentence.lower().replace("’", "'").replace("“", '"').replace("”", '"').split())
    actions = set()
    if _OPTIONS.search(low):  # what the model can do, or an example: not a rule
        low = ""
    for name, pattern in _COMPILED.items():
        for m in pattern.finditer(low):
            if name.endswith("-not") or name in ("dates-not", "names-not") or not _negated_at(low, m.start()):
                actions.add(name)
                break
            if name in _REFUSED:
                actions.add(f"{name}-not")
    for refused in _REFUSED:
        if f"{refused}-not" in actions:
            actions.discard(refused)
    widened = _WIDEN.sub(" ", low)
    conditions = [m.group() for m in _CONDITION.finditer(widened)]
    found = {stem(w) for c in conditions for w in words(c)
             if w not in STOPWORDS | {"new", "fact", "memory", "memories", "question", "questions"}}
    absent = bool(found & _ABSENT)
    condition = frozenset(_SYNONYMS.get(s, s) for s in found - _ABSENT) | ({"contain"} if absent else frozenset())
    negated = absent or any(re.search(rf"\b{_NEG}\b|\bno\b", c) for c in conditions)
    upper = {_unit(m["unit"]): n for m in _UPPER.finditer(low) if (n := _count(m["n"])) is not None}
    lower = {_unit(m["unit"]): n for m in _LOWER.finditer(low) if (n := _count(m["n"])) is not None}
    return Rule(sentence, frozenset(actions), condition, negated, bool(_COVERS.search(low)),
                bool(_EXCEPTION.search(low)), bool(_FIELD.search(low)), section, upper, lower)


def _opposed(a: Rule, b: Rule) -> list[str]:
    found = [f"{x} / {y}" for x in sorted(a.actions) for y in sorted(b.actions) if frozenset((x, y)) in OPPOSED]
    for unit, most in a.upper.items():
        if unit in b.lower and b.lower[unit] > most:
            found.append(f"at most {most} {unit}s / at least {b.lower[unit]} {unit}s")
    for unit, most in b.upper.items():
        if unit in a.lower and a.lower[unit] > most:
            found.append(f"at least {a.lower[unit]} {unit}s / at most {most} {unit}s")
    return found


def _same_condition(a: Rule, b: Rule) -> bool:
    if not a.condition and not b.condition:
        return True
    if not a.condition or not b.condition:
        return True  # the rule without a condition applies in the other's case too
    if a.covers and not b.covers or b.covers and not a.covers:
        return True
    if a.negated_condition != b.negated_condition:
        return False
    shared = len(a.condition & b.condition)
    return shared / min(len(a.condition), len(b.condition)) >= 0.6


def _section(line: str, current: str | None) -> str | None:
    m = _HEADING.match(line)
    if not m:
        return current
    title = (m["h"] or m["s"] or m["c"] or "").lower()
    for key, operation in _OPERATIONS.items():
        if key in title:
            return operation
    return current if m["c"] else None


def _rules(text: str) -> list[Rule]:
    from memopt.core.text import sentences

    rules, section = [], None
    for line in text.splitlines():
        section = _section(line, section)
        for sentence in sentences(line.strip(" -*•\t")):
            rules.append(read_rule(sentence, section))
    return rules


def contradictions(text: str) -> list[tuple[str, str, str]]:
    """Each pair of rules of ``text`` that conflict, as ``(first, second, why)``."""
    rules = _rules(text)
    out = []
    for i, a in enumerate(rules):
        for b in rules[i + 1:]:
            if a.text == b.text or a.excepts or b.excepts or a.scoped or b.scoped:
                continue
            if a.section and b.section and a.section != b.section:
                continue
            why = _opposed(a, b)
            if why and _same_condition(a, b):
                out.append((a.text, b.text, "; ".join(why)))
    return out
