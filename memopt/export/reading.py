"""One rule read as a condition and the prescriptions (`Claim`) it makes under it.

`read(rule)` turns a clause of `memopt.export.rules` into a `Reading`:

- its **condition**: a leading "If/When/For yes-no questions/On UPDATE/Should ..., " clause, a trailing "... if/when/
  because/for questions about time", a relative clause naming a situation ("a memory that has become outdated"), a
  table row's first cell; made of the situations of `memopt.export.lexicon.CONCEPTS` and the remaining content
  words, as alternatives ("refines or corrects it" is two);
- what **widens** it ("even when ...", "including ...", "regardless of ...") and whether it is **universal**
  ("always", "never", "every", "any", "only", "exactly", ...): a universal rule leaves no room for an exception;
- whether it **states an exception or a priority** ("except", "unless", "otherwise", "by default", "all other
  questions", "takes precedence"), and whether it is a permission or a description rather than a rule ("you may",
  "you receive ...");
- its **claims** (`memopt.export.claims.Claim`): one value of a dimension of `CHOICES` (or its refusal), memory
  operations, speakers, keeping / leaving out an object ("never record dates", "start each fact with the speaker's
  name") (`memopt.export.claims`), a length range or a count range (`memopt.export.quantities`).

Quoted text is an example: it is replaced by what it stands for (`memopt.export.lexicon.QUOTES`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memopt.core.text import STOPWORDS, stem
from memopt.export import lexicon as lx
from memopt.export.claims import WORD as _WORD
from memopt.export.claims import Claim, Situation, prescriptions, target
from memopt.export.quantities import bounds, counts, length
from memopt.export.rules import RuleText

__all__ = ["Claim", "Reading", "read", "situation"]


@dataclass(frozen=True)
class Reading:
    """A rule read: its condition (alternatives, empty: always), what widens it, and its claims."""

    rule: RuleText
    condition: tuple[Situation, ...]
    widen: tuple[Situation, ...]
    universal: bool
    excepts: bool
    claims: tuple[Claim, ...] = field(default=())


_EXCEPT = re.compile(r"\b(?:except\w*|unless|exception|otherwise|apart from|other than|but not|by default|as a rule|in "
                     r"general|generally|usually|typically|as a default|default to|save for|with the exception|in "
                     r"most cases|when in doubt)\b|\b(?:all|every|any) other\b|\bother (?:questions|cases|facts|"
                     r"entries|memories)\b|\btakes? precedence\b|\boverrides?\b|\bpriority\b|\bprevails?\b|"
                     r"\bwins over\b|\bin that case\b|\bin this case\b")
_UNIVERSAL = re.compile(r"\b(?:always|never|every|all|any(?! other)|whatever|regardless|no matter|under no "
                        r"circumstances|at all times|without exception|exactly|only|solely|nothing (?:else|but)|"
                        r"however many|ever|in (?:every|all|any) cases?|no(?= \w+ (?:at all|whatsoever)))\b")
_PERMISSION = re.compile(r"\b(?:you (?:can|may|could|might)|(?:can|may) (?:also |optionally )?be|it is (?:fine|ok|"
                         r"okay|acceptable|allowed)|(?:is|are) (?:enough|fine|acceptable|optional|allowed|ok)|"
                         r"optionally|feel free|no need to|(?:do not|don't|doesn't|does not) (?:need|have) to|need not|"
                         r"is not required|suffices?)\b")
_DESCRIPTION = re.compile(r"^(?:you (?:will )?(?:receive|are given|get|see|read|have access|are shown|will be given|"
                          r"are|work|update|maintain|manage|answer|extract|summari[sz]e|rewrite|turn|decide|help|"
                          r"keep|control|handle|write|compare|process|track)\b|(?:the|your) (?:input|inputs|"
                          r"conversation|memories|dialogue|transcript|data|"
                          r"context) (?:is|are|may|will|contain|comes?|holds?|carr)|below (?:is|are)|here (?:is|are)|"
                          r"(?:each|every|a) (?:memory|turn|fact|session) (?:has|carries|is|comes)|these memories|"
                          r"(?:the )?memories (?:carry|have|are|come|contain|hold|may)|"
                          r"this (?:allows|helps|prompt)|based on the above)")
_PRESCRIBING = re.compile(r"\b(?:must|should|shall|never|always|only|do not|don't|cannot|can't|append[- ]only|"
                          r"immutable|read[- ]only|need to|have to|are to|is to)\b")
_LEADING = re.compile(r"^(?:and |but |also |then |so )?(?:only )?(?P<m>if|when|whenever|where|once|in case|in cases "
                      r"where|should|for|on|while|during|as soon as|each time|every time|any time|after|in|with|"
                      r"given|whenever)\b(?P<c>[^,:]{1,160}?)(?:,|:)\s+(?P<rest>\S.*)$")
_TRAILING = re.compile(r"(?:,\s*|\s)(?P<m>(?:only |just |merely |simply |but only )?(?:if|when|whenever|once|in case|"
                       r"as long as|provided that|because|since|unless|except(?: when| if| for| where)?))\b"
                       r"(?P<c>[^;]*)$")
_TRAILING_FOR = re.compile(r"\s(?:for|on|in) (?P<c>(?:(?:[\w/'-]|qyes|qno)+ ){0,4}(?:questions?|queries|cases|events|"
                           r"states|preferences|plans|statements|situations)(?: (?:about|that|which|where|asking|on|"
                           r"with|of)[^,;]*)?)\s*$")
_WIDEN = re.compile(r"\b(?:even (?:if|when|though|for|in|after|before|about)|including|regardless of|no matter "
                    r"(?:what|how|whether|if|which)?|whatever(?! language)|in (?:all|every|any) cases?(?: where)?)\b"
                    r"[^,;]*")
_RELATIVE = re.compile(r"(?<!\bsay)(?<!\bsays)(?<!\bstate)(?<!\bensure)(?<!\bnote)(?<!\bsure)(?<!\bmean)(?<!\bmeans)"
                       r"(?<!\bso)(?<!\bsuch)(?<!\bthan)(?<!\bknow)(?<!\bshow)(?<!\bindicate)(?<!\bexcept)"
                       r"\s(?:that|which|who)\s(?!(?:you|i|we|they|he|she)\b)(?!memory|fact|one|id|field|information|list|person|day|way|time|date|"
                       r"answer|question|it\b)(?P<c>[^,;]*)")
_MAIN_VERB = re.compile(r"(?<=\w)\s+(?:\w+\s+)*?(?:gets?|must|should|shall|will|needs?|receives?|goes|is|are|has|"
                        r"have|stays?|remains?)\b")
_SUBJECT_OP = re.compile(r"^(?:every|each|an?|the|any)\s+(?P<op>opadd|opupdate|opdelete|opnone)\b(?:\s+(?:operation|"
                         r"event|decision))?\s+(?P<rest>(?:gets?|has|have|must|should|needs?|keeps?|receives?|uses?|"
                         r"takes?|is|carries)\b.*)$")
_OP_SCOPE = re.compile(r"\b(?:on|for|with|during|while|when|after|in|every|each|any) (?:an? |the |each |every )?"
                       r"(?:op(?P<op>add|update|delete|none)|(?P<verb>add|updat|delet)(?:e|es|ed|ing)?)\b|"
                       r"\b(?P<ing>updat|add|delet)ing\b|\bwhen (?:you )?(?P<v2>update|add|delete)\b|"
                       r"\bop(?P<op0>add|update|delete|none)\b")
_OPS = {"add": "ADD", "update": "UPDATE", "updat": "UPDATE", "delete": "DELETE", "delet": "DELETE", "none": "NONE"}


def _quote_token(text: str) -> str:
    low = text.lower().strip(" .!?,;:")
    for token, pattern in lx.QUOTE_PATTERNS:
        if pattern.search(low):
            return token
    return "qlit"


def _unquote(text: str, quotes: list[str]) -> str:
    """The text with each quoted example replaced by what it stands for (``qabstain··``: the token, then as many
    dots as the quote's place in ``quotes``), and ``[]`` by ``qempty``."""

    def token(m: re.Match[str]) -> str:
        quotes.append(m[1])
        return f" {_quote_token(m[1])}{'·' * len(quotes)} "

    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = re.sub(r"\[\s*\]", " qempty ", text)
    text = re.sub(r'"([^"]{1,200})"', token, text)
    text = re.sub(r"(?<![A-Za-z0-9])'([^']{1,80})'(?![A-Za-z0-9])", token, text)
    return _LITERAL_DATE.sub(token, text)  # a date written out is an example of its format, quoted or not


_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_LITERAL_DATE = re.compile(rf"(\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}} {_MONTH},? \d{{4}}\b|"
                           rf"\b{_MONTH} \d{{1,2}},? \d{{4}}\b)")


def _requote(text: str, quotes: list[str]) -> str:
    """A condition's quoted words back in place: "for 'how long ago' questions" names its questions by them."""
    return re.sub(r"\bq[a-z]+(·+)", lambda m: quotes[len(m[1]) - 1].lower(), text)


def _ops_marked(text: str) -> str:
    """Memory operations written in capitals become tokens (``UPDATE`` -> ``opupdate``), lists of them drop out."""
    text = re.sub(r"\((?:[^()]*\b(?:ADD|UPDATE|DELETE|NONE)\b){2,}[^()]*\)", " ", text)
    text = re.sub(r"\b(?:NO CHANGE|NOOP)\b", " opnone ", text)
    return re.sub(r"\b(ADD|UPDATE|DELETE|NONE)(?:S|D)?\b", lambda m: f" op{m[1].lower()} ", text)


_SAME_SUBJECT = re.compile(r"\b(?:about |on |concerns? |of )?the same (?:subject|topic|person|people|entity|"
                           r"speaker)\b")


def situation(text: str) -> tuple[Situation, ...]:
    """The alternatives a condition names: its concepts (``@absent``, ...) and the stems of its other words."""
    out = []
    text = _SAME_SUBJECT.sub(" ", text)
    for part in re.split(r"\bor\b|\beither\b|/(?!no)", text):
        concepts = set()
        for name, pattern in lx.CONCEPT_PATTERNS:
            if pattern.search(part):
                concepts.add(name)
                part = pattern.sub(" ", part)
        scope = _OP_SCOPE.search(part)
        if scope:
            concepts.add("@op:" + _OPS[next(g for g in scope.groups() if g)])
            part = part[:scope.start()] + " " + part[scope.end():]
        stems = {stem(w) for w in _WORD.findall(part) if w not in STOPWORDS and w not in lx.GENERIC
                 and not w.startswith(("q", "op")) or w in ("question", "query")}
        stems -= {stem(w) for w in lx.GENERIC} | {"ask", "ha", "given", "give", "contain", "say", "happen"}
        item = frozenset(concepts | stems)
        if item:
            out.append(item)
    if len(out) > 1 and any(not any(w.startswith("@") for w in alt) for alt in out):
        out = [frozenset().union(*out)]  # "A or B" of plain words is one situation
    return tuple(out)


def _conditions(texts: list[str]) -> tuple[Situation, ...]:
    """The alternatives of all conditions together (each condition holds: their situations join)."""
    alternatives: list[Situation] = [frozenset()]
    for text in texts:
        found = situation(text)
        if found:
            alternatives = [a | b for a in alternatives for b in found]
    return tuple(a for a in alternatives if a)


_OP_SCOPE_INSIDE = re.compile(r"\b(?:for|on|with|during|after|before|in) (?:an? |each |every |the )?"
                              r"op(?:add|update|delete|none)\b")
_SITUATION_WORD = re.compile(r"\b(?:outdated|obsolete|superseded|stale|conflicting|contradictory|contradicting|"
                             r"duplicates|contradictions|conflicts|"
                             r"duplicate|duplicated|repeated|retracted|cancell?ed)\b")


def read(rule: RuleText, antecedent: tuple[Situation, ...] = ()) -> Reading:
    """The condition and claims of one rule (see the module docstring); ``antecedent``: what "them" stands for."""
    quotes: list[str] = []
    text = " ".join(_ops_marked(_unquote(rule.text, quotes)).lower().split()).rstrip(" .!")
    excepts = bool(_EXCEPT.search(text))
    if re.match(r"^(?:for example|for instance|e\.g\.|example|note:? (?:that )?(?:the|this) example)\b", text):
        return Reading(rule, (), (), False, excepts)
    conds: list[str] = [rule.lead] if rule.lead else []
    universal = False
    subject = _SUBJECT_OP.match(text)
    if subject:
        conds.append(f"on {subject['op']}")
        universal = text.startswith(("every", "any", "each"))
        text = subject["rest"]
    lead = _LEADING.match(text)
    if lead and not re.match(r"\s*(?:example|instance)\b", lead["c"]) and len(lead["rest"].split()) >= 2 and not (
            lead["m"] in ("in", "with", "on", "for", "given") and not re.search(
                r"\bquestions?\b|\bcases?\b|\bop(?:add|update|delete|none)\b|\bfield\b|\bkey\b|\bwhere\b|\bthat\b|"
                r"\bwhich\b|\beach\b|\bevery\b|\bfacts?\b|\bmemor", lead["c"])):
        if not re.search(r"\b(?:field|key)\b", lead["c"]):
            conds.append(lead["c"])
        text = lead["rest"] if not re.search(r"\b(?:field|key)\b", lead["c"]) else lead["c"] + " " + lead["rest"]
    widen = [m[0] for m in _WIDEN.finditer(text)]
    text = _WIDEN.sub(" ", text)
    trail = _TRAILING.search(text)
    if trail and not re.search(r"\b(?:date|time|day|moment|year|month)\s*$", text[:trail.start()]) and \
            trail["c"].strip() not in ("any", "possible", "needed", "necessary", "applicable"):
        if not re.match(r"unless|except", trail["m"]):
            conds.append(trail["c"])
        text = text[:trail.start()]
    for_ = _TRAILING_FOR.search(text)
    if for_:
        conds.append(for_["c"])
        text = text[:for_.start()]
    for rel in list(_RELATIVE.finditer(text)):
        clause = rel["c"]
        main = _MAIN_VERB.search(clause)
        clause = clause[:main.start()] if main else clause
        if any(pattern.search(clause) for name, pattern in lx.CONCEPT_PATTERNS if not name.startswith("@q-")):
            conds.append(clause)
            text = text.replace(rel[0], " " + (rel["c"][main.start():] if main else ""))
    conds += [m[0] for m in _SITUATION_WORD.finditer(text)]
    for scope in _OP_SCOPE_INSIDE.finditer(text):
        conds.append(scope[0])
    text = _OP_SCOPE_INSIDE.sub(" ", text)
    text = " ".join(text.split())
    universal = universal or bool(widen) or bool(_UNIVERSAL.search(text))
    condition = _conditions([_requote(c, quotes) for c in conds])
    widened = tuple(s for w in widen for s in situation(_requote(w, quotes)))
    if _PERMISSION.search(text) or _DESCRIPTION.match(text) and (not _PRESCRIBING.search(text) or re.match(
            r"(?:below|here) (?:is|are)|this (?:allows|helps)|based on the above", text)) or not text:
        return Reading(rule, condition, widened, universal, excepts)
    where = target(text, rule.text)
    claims = prescriptions(text, where, antecedent) + length(text, where) + bounds(text, where) + counts(text)
    return Reading(rule, condition, widened, universal, excepts, tuple(claims))
