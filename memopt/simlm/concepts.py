"""The concepts SimLM's directive reading looks for in an instruction.

Each concept is a small lexicon of stems and phrases: a regular expression over a clause's words
(lower case, joined by single spaces, so ``[\\w'-]+ `` is one word; see `memopt.simlm.instructions`) and a
description in words for the documentation. Concepts name what a sentence talks about ("a
relative time expression", "every speaker", "a contradiction"). A `Cue` says which concepts, found
together and in which polarity, speak for or against a directive (`memopt.simlm.stance`; the catalogue:
`memopt.simlm.directives`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

__all__ = ["ABSTAIN_PHRASE", "Concept", "CONCEPTS"]

_W = r"[\w'-]+"


def _gap(n: int) -> str:
    return rf"(?:{_W} ){{0,{n}}}"


@dataclass(frozen=True)
class Concept:
    """A concept: a short description and the pattern that finds it (compiled on first use)."""

    name: str
    words: str
    source: str

    @property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern."""
        return _compile(self.source)


@cache
def _compile(source: str) -> re.Pattern[str]:
    return re.compile(source)


def _concept(name: str, words: str, *alternatives: str) -> Concept:
    body = "|".join(alternatives)
    return Concept(name, words, rf"(?<![\w'-])(?:{body})(?![\w'-])")


_DATE_NOUN = r"(?:dates?|days?|months?|years?|times?|weeks?|calendar)"
_DETAIL = (r"(?:names|(?:the|a|an|every|each|any|exact|full|proper|brand|their|his|her|its|pet's|dog's) name|"
           r"numbers?|numerals?|(?<!took )(?<!take )(?<!in )places?|locations?|quantit(?:y|ies)|amounts?|"
           r"figures|titles?(?! for)|proper nouns?|specifics|particulars|brands?|cities|city|towns?|countr(?:y|ies)|"
           r"address(?:es)?|venues?)")
_DETAILS = r"(?:details?|specifics|particulars|specificity|nuances?)"
_FIDELITY = (r"(?:every|each|all|any|exact|specific|concrete|precise|full|complete|whole|fine|small|minor|"
             r"particular|entire|original|actual|much|more|rich|ample|maximum)")
_ITEM = (r"(?:memor(?:y|ies)|items?|context|pieces?|entr(?:y|ies)|excerpts?|facts?|passages?|sources?|snippets?|"
         r"results?|matches|lines|turns|evidence|information|ones|documents?|answers|names|things|values|"
         r"possibilities|nodes?|chunks?|records?|notes|hits)")
_PARTY = (r"(?:participants?|speakers?|persons?|people|part(?:y|ies)|interlocutors?|individuals?|sides?|users|humans?|"
          r"members?|attendees?)")
# people named by their role in a conversation: "the coach", "a buyer", "every caller"
_ROLE = (r"(?:tutors?|students?|teachers?|learners?|pupils?|candidates?|interview(?:er|ee)s?|applicants?|recruiters?|"
         r"agents?|customers?|clients?|players?|gamers?|patients?|doctors?|clinicians?|nurses?|caregivers?|carers?|"
         r"colleagues?|co-?workers?|friends?|family members?|employees?|managers?|advis[eo]rs?|"
         r"sales ?reps?|representatives?|buyers?|sellers?|hosts?|guests?|coach(?:es)?|mentors?|mentees?|"
         r"therapists?|counsell?ors?|parents?|callers?|visitors?|residents?|assistants?|bots?|"
         rf"{_PARTY[3:-1]})")
_ROLE_DET = r"(?:the |a |an |each |every |any |their |both )?"
_SAYING = (r"(?:tells?|says?|said|mentions?|shares?|reveals?|talks?|speaks?|states?|discloses?|"
           r"describes?)")
_SAY = (r"(?:say|says|saying|said|repl(?:y|ies|ied|ying)|respond\w*|answer\w*|stat(?:e|es|ed|ing)|return\w*|"
        r"output\w*|writ(?:e|es|ing)|giv(?:e|es|ing)|tell\w*|admit\w*|indicat\w*|receiv(?:e|es|ing)|be)")
ABSTAIN_PHRASE = (r"(?:not mentioned|unknown|(?:cannot|cant|can not|unable to) (?:answer|tell|say)|"
                   r"(?:i|you|we) (?:dont|do not) know|no answer|(?:cannot|cant|can not) be "
                   r"answered|unanswerable|not (?:enough|sufficient) information|"
                   r"(?:i|you|we|it) (?:dont|do not|doesnt|does not) have "
                   r"(?:(?:that|this|the|any|enough|such|sufficient) )?(?:information|answer|data|knowledge|record)|"
                   # "we do not have it on file", "I don't have this in my notes"
                   r"(?:i|you|we) (?:dont|do not) have (?:that|this|it) (?:in|on) (?:[\w'-]+ )?(?:memory|memories|"
                   r"notes|records?|file)|"
                   r"(?:i|you|we) have no (?:information|idea|record|knowledge)|insufficient (?:information|"
                   r"evidence)|no (?:relevant )?information(?: is found)?|not available|no idea|not (?:stated|known)|"
                   r"not found|(?:isnt|is not|arent|are not) (?:available|known|mentioned|stated|found)|"
                   r"(?:could|can|did) ?(?:not|nt) find|no record|not (?:in|on) (?:the |my |our )?(?:memory|"
                   r"memories|records?|file|context|notes|documents?|data)|"
                   # other tenses and places: "it was never mentioned", "it isn't in the documents"
                   r"(?:wasnt|was not|werent|were not|hasnt been|has not been|never) "
                   r"(?:mentioned|stated|recorded|said)|"
                   r"(?:isnt|is not|arent|are not|wasnt|was not) (?:in|on) (?:the |my |our |your )?(?:memory|memories|"
                   r"records?|file|context|notes|documents?|data))")

CONCEPTS: dict[str, Concept] = {c.name: c for c in (
    # time
    _concept("RELATIVE", "a relative time expression ('yesterday', 'last week', 'two days ago', 'relative dates', "
             "'time references')",
             r"relative(?:ly)?", r"yesterday", r"tomorrow", r"today", r"tonight", r"ago", r"recently",
             r"the other day",
             r"(?:last|next|this|coming|previous|past) (?:week|weekend|month|year|night|morning|evening|monday|"
             r"tuesday|wednesday|thursday|friday|saturday|sunday|spring|summer|autumn|fall|winter)s?",
             r"(?:time|temporal) (?:references?|expressions?|words?|mentions?|phrases?|markers?|terms?)",
             r"references? to (?:time|dates?|days?)", r"vague (?:time|dates?|temporal)\w*"),
    _concept("DATE", "a date or time word: 'date', 'day', 'month', 'year', 'time', 'calendar'", _DATE_NOUN),
    _concept("ABSOLUTE", "an absolute target: 'absolute', 'calendar', 'the actual / exact / specific date', 'day, "
             "month and year', 'the date it refers to'",
             r"absolute(?:ly)?", r"calendar",
             rf"(?:actual|exact|specific|concrete|explicit|precise|real|full|fixed|definite) (?:{_W} )?{_DATE_NOUN}",
             rf"(?:dates?|days?|times?) {_gap(4)}(?:absolute|explicit|specific|exact|concrete)",
             r"(?:day|date),? month,? (?:and )?year", r"month and year",
             rf"{_DATE_NOUN} {_gap(3)}(?:refers?|referred|points?|denotes?|means?|corresponds?|stands?) (?:to|for)?",
             r"(?:date|day) behind"),
    _concept("ANCHOR", "the reference date: the session / conversation date, a timestamp",
             r"session(?:'s)? (?:date|timestamp|time)", r"timestamps?",
             rf"(?:date|time)s? (?:of|on which) {_gap(2)}(?:session|conversation|memory|message|chat|item|speaking|"
             r"dialogue)s?",
             r"(?:conversation|session|memory|chat)(?:'s)? (?:date|timestamp)s?", r"dated", r"recorded",
             rf"when {_gap(2)}(?:conversation|session|chat)"),
    _concept("RESOLVE", "resolving or anchoring: 'resolve', 'anchor', 'ground', 'pin down'",
             r"resolv\w*", r"anchor\w*", r"ground(?:s|ed|ing)?", r"pin\w* down", r"reference point",
             r"as (?:the |its |their )?reference"),
    _concept("CALCULATE", "working a date out: 'compute', 'calculate', 'work out', 'figure out', 'determine', "
             "'infer'",
             r"comput\w*", r"calculat\w*", r"work\w* out", r"figur\w* out", r"determin\w*", r"infer\w*",
             r"deduc\w*", r"deriv\w*", r"count\w* (?:from|back)", r"interpret\w*"),
    _concept("CONVERT", "converting: 'convert', 'rewrite', 'turn into', 'replace', 'translate', 'express as'",
             r"convert\w*", r"conversion", r"rewrit\w*", r"rewrote", r"turn(?:ed|ing)?(?! of)", r"chang\w*",
             r"replac\w*", r"translat\w*", r"transform\w*", r"map(?:s|ped|ping)?", r"express(?:es|ed|ing)?",
             r"restat\w*", r"normali[sz]\w*", r"substitut\w*", r"swap\w*", r"render\w*"),
    _concept("AS_IS", "keeping the wording: 'keep / leave / copy ... as they are', 'verbatim', 'must stay'",
             r"keep(?:s|ing)?(?! track)(?! a record)(?! on)(?! \w+ing\b)", r"kept(?! \w+ing\b)",
             r"leav(?:e|es|ing)", r"left", r"retain\w*",
             r"preserv\w*", r"cop(?:y|ies|ied|ying)", r"repeat\w*", r"quot(?:e|es|ing)", r"reproduc\w*",
             r"stay(?:s|ing)?", r"remain\w*", r"verbatim", r"untouched", r"unchanged"),
    # people
    _concept("ALL_PARTIES", "every speaker: 'both speakers', 'each participant'",
             rf"(?:every|each|all|both|either|any|whichever|no)(?: of)?(?: the| these| those)?"
             rf"(?: two| other| different)?(?: conversation| chat| dialogue| session)? "
             rf"{_PARTY}(?:'s|')?",
             # "each of them tells ...": each, as the subject of a verb of saying, is each speaker
             rf"(?:each|either|both|all|every one) of (?:them|the two|us) {_SAYING}",
             r"(?:facts?|information|details?|statements?) (?:of|from|about|by) (?:both|each|all|every one) of "
             r"(?:them|the two)",
             # a label and its value, "Speakers: all of them"
             rf"^{_PARTY} (?:all|both|each|every one)", rf"^{_PARTY} {_gap(4)}(?:all|both|each|every one) of them"),
    _concept("ROLES", "two or more people by their role: 'the coach and the athlete', 'the buyer as well as the "
             "seller', 'every caller', 'both parties', 'either one says'",
             rf"{_ROLE}(?:'s|')? (?:and|&) {_ROLE_DET}{_ROLE}(?:'s|')?",
             rf"{_ROLE}(?:'s|')? (?:{_W} |, ){{0,10}}?(?:as well as|alongside|along with|together with|"
             rf"in addition to|besides) {_ROLE_DET}{_ROLE}(?:'s|')?",
             rf"(?:every|each|all|both|either|any)(?: of)?(?: the| these| those)?(?: {_W}){{0,2}}? {_ROLE}(?:'s|')?",
             rf"(?:the|both|all) (?:two|three|four|several) (?:{_W} )?{_ROLE}",
             rf"either (?:one|of them|of the two) {_SAYING}",
             # any two people who each say something: "the coach and the athlete each tell"
             rf"(?:the |a |an )?{_W} and (?:the |a |an |their )?{_W} (?:each|both) {_SAYING}"),
    _concept("EVERYONE", "everyone: 'everyone', 'anybody', 'whoever'", r"(?:everyone|everybody|anyone|anybody|whoever)"
             r"(?! else)(?! other than)(?! but)(?! except)(?! besides)"),
    _concept("OTHER_PARTY", "the other speaker: 'the second speaker', 'the other person', 'the assistant'",
             r"(?:the |a |their )?(?:other|second|another|2nd) (?:speaker|person|participant|party|user|side|"
             r"interlocutor|human)s?(?:'s)?",
             r"(?:(?<!^)the assistant|^the assistant(?! (?:should|must|shall|will|may|can|cannot|needs?|is to|has to|"
             r"ought|always|never|does|do)\b))(?:'s)?(?! messages?)(?! turns?)(?! input)(?! responses?)(?! or system)",
             r"(?:the |their |a )?(?:conversation |chat )?partner(?:'s)?", r"speaker (?:b|2|two)",
             r"(?:assistant|ai|bot|agent|companion|other)-side (?:speaker|participant|party|person)s?",
             r"(?:anyone|anybody|everyone|everybody|someone|those|people) (?:else|other than|but|except|besides)",
             r"(?:person|people|one) (?:they|the user|you|he|she) (?:is |are )?(?:talking|speaking|chatting) "
             r"(?:to|with)", r"(?:friend|partner|person|people|someone|others?) (?:who|that) (?:talks?|speaks?|chats?) "
             r"(?:to|with) (?:the user|them|you|him|her)"),
    _concept("ONE_PARTY", "one speaker: 'the user', 'the first speaker'",
             r"the user(?:'s)?(?! and)(?! or)",
             r"(?:the )?(?:first|main|primary) (?:speaker|person|participant|user)(?:'s)?",
             r"(?:one|a single) (?:speaker|person|participant)", r"the human"),
    _concept("INFO", "what someone says: facts, information, details, statements",
             r"facts?", r"informations?", r"details?", r"statements?", r"says?", r"said", r"reveals?", r"mentions?",
             r"tells?", r"life", r"lives", r"preferences?", r"stuff", r"things"),
    _concept("IGNORE", "leaving someone out: 'ignore', 'skip', 'drop', 'discard', 'exclude'",
             r"ignor\w*", r"skip\w*", r"drop\w*", r"discard\w*", r"exclud\w*", r"disregard\w*", r"omit\w*",
             r"leav\w* out", r"left out", r"overlook\w*", r"neglect\w*", r"forg[eo]t\w*(?! to)"),
    _concept("RESTRICT", "a restriction: 'only', 'solely', 'alone', 'focus on', 'limit to'",
             r"only", r"solely", r"exclusively", r"alone", r"just(?! because)(?! as)", r"purely", r"nothing but",
             rf"focus\w* {_gap(1)}on", rf"limit\w* {_gap(1)}to", rf"restrict\w* {_gap(2)}to",
             rf"confin\w* {_gap(1)}to", r"keep to", r"stick\w* to"),
    # details
    _concept("DETAIL", "a specific detail: names, numbers, places, quantities, titles, specifics", _DETAIL),
    _concept("DETAILS", "details: 'details', 'specifics', 'particulars'", _DETAILS),
    _concept("EXACT_DETAIL", "every / exact / concrete details, or details kept 'exactly as said', 'verbatim', "
             "'in full'",
             rf"{_FIDELITY} {_gap(2)}(?:{_DETAIL}|{_DETAILS}|(?<!by )name)",
             rf"as many {_gap(2)}(?:{_DETAIL}|{_DETAILS}) as possible",
             rf"(?:{_DETAIL}|{_DETAILS}) {_gap(6)}(?:exactly|verbatim|precisely|word for word|in full|intact)",
             r"(?:them|it) all", r"all of them"),
    _concept("DETAILED_FACT", "detailed facts: 'facts must be detailed', 'specific facts', 'specific information', "
             "'as specific as possible'",
             rf"(?:facts?|summar(?:y|ies)|sentences?) {_gap(3)}(?:detailed|specific|precise)",
             r"(?:detailed|specific|precise|concrete|exact) (?:facts?|summar(?:y|ies)|information|data)",
             r"as (?:specific|detailed|precise|concrete|exact|complete) as (?:possible|you can|it gets)",
             r"maximally (?:specific|detailed|precise)",
             r"(?:long|longer|fuller|richer|more detailed|more specific) (?:facts?|summar(?:y|ies)|memor(?:y|ies)|"
             r"entr(?:y|ies)|notes|sentences?)"),
    _concept("TOO_VAGUE", "a fact criticised as too vague: 'too vague', 'too generic', 'not specific enough' (or "
             "'not too vague': both ask for more detail)",
             r"(?:(?:not|never) (?:be |being |seem |sound )?)?too (?:vague|general|generic|abstract|unspecific|"
             r"imprecise|sparse|thin)",
             r"(?:not |never )?(?:specific|detailed|precise|concrete) enough",
             r"lack\w* (?:detail|details|specifics|specificity|precision)"),
    _concept("WHOLE_FACT", "the whole fact: 'the complete sentence', 'in full'",
             r"(?:the|each|every|its) (?:complete|full|whole|entire|unabridged) (?:sentence|fact|statement|wording|"
             r"clause|text|version)", r"(?:complete|full|whole|entire|unabridged) (?:facts|statements)", r"in full"),
    _concept("PRESERVE", "keeping something in: 'keep', 'preserve', 'retain', 'include', 'mention', 'copy'",
             r"keep(?:s|ing)?(?! track)(?! a record)(?! to)(?! \w+ing\b)", r"kept", r"preserv\w*", r"retain\w*",
             r"includ\w*",
             r"mention\w*", r"contain\w*", r"spell\w* out", r"cop(?:y|ies|ied|ying)", r"reproduc\w*",
             r"quot(?:e|es|ing)",
             r"carr\w* over", r"stay\w*", r"remain\w*", r"restor\w*", r"put\w* (?:[\w'-]+ |, ){0,8}back",
             # appearing keeps only when required or in what is written, not where the input shows something
             r"(?:must|should|shall|to|always|will|still) appear\w*", r"appear\w* (?:in|verbatim|exactly|unchanged) "
             r"(?:the |each |every )?(?:facts?|memor(?:y|ies)|summar(?:y|ies)|output|entry|entries|notes?|record)",
             r"name (?=every|each|all|the|who)"),
    _concept("WRITE", "writing something down: 'record', 'store', 'capture', 'write', 'note'",
             r"record\w*", r"stor(?:e|es|ed|ing)", r"captur\w*", r"not(?:e|es|ed|ing)", r"writ(?:e|es|ing|ten)",
             r"wrote", r"sav(?:e|es|ed|ing)", r"remember\w*", r"maintain\w*", r"list\w*", r"giv(?:e|es|ing|en)"),
    _concept("SHORTEN", "shortening: 'shorten', 'abbreviate', 'truncate', 'condense', 'generalise', 'cut short'",
             r"shorten\w*", r"abbreviat\w*", r"truncat\w*", r"condens\w*", r"compress\w*", r"abridg\w*", r"trim\w*",
             r"clip(?:s|ped|ping)?", r"generali[sz]\w*", rf"cut\w* {_gap(2)}(?:short|down)",
             rf"cut\w* {_gap(3)}to", r"boil\w* down"),
    _concept("OMIT", "leaving something out or altering it: 'drop', 'omit', 'leave out', 'lose', 'paraphrase', "
             "'round'",
             r"drop\w*", r"omit\w*", rf"leav\w* {_gap(2)}out", r"paraphras\w*", r"alter\w*", r"chang\w*",
             r"round(?:s|ed|ing)?", r"approximat\w*", r"left out", r"los(?:e|es|ing|t)", r"skip\w*", r"remov\w*",
             r"discard\w*", r"strip\w*", r"throw\w* away", r"forget\w*(?! to)", r"ignor\w*", r"get\w* rid of",
             r"sacrific\w*", r"abstract\w* away", r"giv\w* up"),
    _concept("GIST", "the gist only: 'the main point', 'the general idea', 'a brief summary', 'the first clause'",
             r"gist", r"main point", r"general (?:idea|statement)", r"brief summary", r"(?:rough|vague) descriptions?",
             r"first clause", r"shortened version", r"short version"),
    # updates and deletes
    _concept("OVERWRITE", "changing a stored memory: 'update', 'overwrite', 'replace', 'modify', 'merge'",
             r"updat\w*", r"overwrit\w*", r"overwrote", r"replac\w*", r"modif\w*", r"amend\w*", r"revis\w*",
             r"(?<!no )chang\w*(?! of (?:mind|heart|plans?))(?! (?:their|his|her|your|my|one's) mind)",
             r"edit\w*",  # "no change" names the operation that does nothing; a change of mind is a contradiction
             r"merg\w*", rf"fold\w* {_gap(2)}into", r"supersed\w*", r"invalidat\w*",
             rf"combin\w* {_gap(4)}into (?:one|a single)"),
    _concept("ADD", "adding a memory: 'add', 'append', 'as a new memory', 'keep both', 'separately'",
             r"add(?:s|ed|ing)?", r"append\w*",
             r"(?:new|separate) (?:memory|memories|entry|entries|element|item|record)s?",
             r"(?:its|their) own (?:memory|entry|record)", r"another (?:memory|entry)",
             r"(?:memory|entry|record) of (?:its|their) own",
             r"keep(?:s|ing)? (?:both|two|the old|the memory|the existing)", r"leav\w* the old", r"next to it",
             r"separately"),
    _concept("KEEP_BOTH", "keeping both: 'keep both', 'keep two memories'",
             r"keep(?:s|ing)? (?:both|two)", r"both (?:memories|facts) (?:stay|remain)",
             rf"add\w* {_gap(3)}(?:and|while) keep\w* the (?:old|existing|stored|original)"),
    _concept("KEEP_OLD", "keeping the stored memory: 'keep the existing memories', 'existing memories are left "
             "unchanged'",
             r"keep(?:s|ing)? (?:the )?(?:old|existing|stored|original|current) (?:memor(?:y|ies)|ones?|facts?)",
             rf"(?:old|existing|stored|original|current) (?:memor(?:y|ies)|ones?|facts?|entr(?:y|ies)) {_gap(4)}"
             r"(?:left|kept|stays?|remains?|untouched|unchanged|intact|preserved|retained)"),
    _concept("CONFLICT", "a contradiction: 'contradict', 'conflict', 'inconsistent', 'clash', 'makes it false'",
             r"contradict\w*", r"contradiction\w*", r"conflict\w*", r"inconsisten\w*", r"incompatib\w*", r"clash\w*",
             r"disagree\w*", rf"(?:mak|prov)\w* {_gap(3)}(?:false|wrong|untrue|obsolete|invalid|incorrect)",
             r"correct(?:s|ions?)",
             r"(?:cannot|cant) both (?:be true|hold)", r"mutually exclusive",
             r"no longer (?:true|valid|accurate|correct|the case|holds?)",
             r"irreconcil\w*", r"(?:cannot|cant|can not) be reconciled", r"at odds", r"contrary to",
             r"go(?:es)? against", r"disprov\w*", r"refut\w*",
             r"(?:is|are|was|were|be) (?:now )?(?:wrong|false|incorrect|untrue|outdated|obsolete|invalid|inaccurate)",
             r"change\w* of (?:mind|heart|plans?)", r"chang\w* (?:their|his|her|your|my|one's) mind",
             # a change of the facts: "when the information has changed", "a new statement supersedes it"
             r"(?:has|have|had) (?:since |now |really )?changed", r"out of date", r"supersedes",
             # a real change of state: "real changes such as a new job"
             r"(?:genuine|real|actual|true) changes?", r"changes? of (?:state|status|circumstances?)"),
    _concept("COMPATIBLE", "compatibility: 'compatible', 'can both be true', 'coexist', 'complements', 'still true'",
             r"(?<![\w-])compatib\w*", r"(?<!in)consistent", r"coexist\w*", rf"both {_gap(2)}(?:true|valid|hold)",
             r"(?:still|also) (?:true|valid|holds?)", r"complement\w*", r"merely adds?",
             r"(?:merely|only|just|simply) (?:extends?|elaborates?|expands?|refines?)",
             r"adds? (?:information|detail|to)",
             r"(?:extra|additional|supplementary|complementary|further) (?:information|details?|preferences?|facts?)",
             r"supplement\w*", r"(?:be|are) true together"),
    _concept("SAME_TOPIC", "a shared topic: 'the same topic', 'related', 'similar', 'overlapping'",
             r"(?<!person and the )(?<!person and )(?<!person , )same (?:topic|subject|thing|person|entity|matter|item)"
             r"(?! (?:and |, |, and )(?:the )?(?:same|object|thing|item|activity|fact)\b)",
             r"related", r"similar(?:ity|ities)?",
             r"overlap\w*", r"topical\w*", r"(?:shared|common) (?:topics?|subjects?|themes?|keywords?)",
             r"shar\w* (?:a |the )?(?:topic|subject|words?)", r"(?:known|existing) topic",
             r"about the same(?! (?:person|subject|entity) (?:and|,))"),
    _concept("ALWAYS", "always: 'always', 'every time', 'any newer fact'",
             r"always", r"every time", r"(?:any|every) (?:newer |new )?fact"),
    _concept("PREFER", "a preference for doing something: 'prefer', 'favour' (not a preference of the user's)",
             # a preference between two acts names the first, not updating: "prefer appending over editing, and ..."
             rf"(?:prefer(?:s|red|ring|ably|able)?|favou?r(?:s|ed|ing|ably)?)(?! {_gap(6)}(?:over|above|rather than|"
             r"instead of) )", r"(?:prefer|favou?r)\w* (?:updat|overwrit|replac|merg|modif|edit|rewrit)\w*",
             r"err\w* on the side of"),
    _concept("ONLY_IF", "a restriction: 'only', 'solely', 'exclusively', 'reserve for', 'justify'",
             r"only", r"solely", r"exclusively", rf"reserv\w* {_gap(2)}for", r"justif\w*"),
    _concept("UNLESS", "an exception: 'unless', 'except when'", r"unless", r"except (?:when|if|where)"),
    _concept("OTHERWISE", "the other case: 'otherwise', 'anything else', 'if it does not'",
             r"otherwise", r"anything else", r"everything else", r"(?:in )?(?:all )?other cases", r"if not",
             r"if (?:it|they|so) (?:does|do|did|is|are|can) not"),
    _concept("DELETE", "deleting: 'delete', 'remove', 'erase', 'drop', 'discard'",
             r"delet\w*", r"remov\w*", r"eras\w*", r"purg\w*", r"discard\w*", r"get\w* rid of", r"wip(?:e|es|ed|ing)",
             r"clear(?:s|ed|ing)?", r"drop\w*", r"invalidat\w*", r"expir\w*", r"retir(?:e|es|ing)"),
    _concept("EXPLICIT", "explicitness: 'explicitly', 'expressly', 'clearly', 'directly'",
             r"explicit\w*", r"expressly", r"clearly", r"directly", r"outright", r"unambiguous\w*", r"specifically"),
    _concept("RETRACTION", "a retraction: 'retract', 'withdraw', 'revoke', 'no longer', 'taken back'",
             r"retract\w*", r"withdr[ae]w\w*", r"revok\w*", r"no longer", r"taken back", rf"tak\w* {_gap(1)}back",
             r"cancel\w*", r"(?:isnt|is not|not) true anymore", r"stopped", r"quit\w*", r"negat\w*"),
    _concept("SAYS", "a statement: 'says', 'states', 'mentions'",
             r"say(?:s)?", r"said", r"stat(?:e|es|ed)", r"mention\w*", r"tell(?:s)?", r"told"),
    _concept("THAT_ONE", "that one memory: 'that same memory', 'the one it names', 'exactly one', 'a single memory'",
             r"(?:that|the|this) (?:same|exact|very|specific|single|one|matching|corresponding) (?:memory|one|thing|"
             r"activity|fact|item)", r"that (?:[\w'-]+ )?(?:one|memory)",
             rf"the one {_gap(3)}(?:names?|refers?|mentions?|"
             r"retracts?|withdraws?)", r"exactly one", r"(?:one|a single|single) memory",
             r"(?:retracted|withdrawn|cancelled|named) (?:one|memory)", r"concerned",
             # the same person and the same object together name one memory, not a topic
             r"same (?:person|subject|entity) (?:and |, |, and )(?:the )?(?:same )?(?:object|thing|item|activity|fact)",
             r"(?:exact|precise|specific|named|retracted) target"),
    _concept("OTHER_MEMORIES", "other memories: 'other memories', 'the rest', 'related', 'every memory'",
             r"(?<!each )others?", r"the rest", r"related", r"neighbou?r\w*", r"everything", r"unrelated",
             r"remaining", rf"(?:every|all|any) {_gap(2)}memor(?:y|ies)", r"all (?:their|its|his|her)", r"adjacent",
             r"surrounding", r"(?:the|memory|whole) (?:store|database|bank)",
             rf"(?:memor(?:y|ies)|facts?|ones|records?|entr(?:y|ies)|items?) {_gap(6)}(?:does|do|did)(?:nt| not) "
             rf"{_gap(1)}(?:name|mention|refer|retract|withdraw|cover|concern)\w*",
             r"(?:memor(?:y|ies)|facts?|ones) not (?:named|mentioned|retracted|withdrawn|affected|concerned|"
             r"covered|referred)"),
    _concept("SPARE", "leaving memories alone: 'keep', 'leave', 'untouched', 'in place'",
             r"keep\w*", r"kept", r"leav\w*", r"spar\w*", r"retain\w*", r"preserv\w*", r"untouched", r"in place",
             r"surviv\w*", r"intact",
             r"stay(?:s)? (?:as (?:they|it) (?:are|is)|the same|unchanged|valid|true|intact|in place|put)",
             r"(?:stay|stays|remain|remains)(?= *(?:[.;,!]|$))"),  # "only A goes; the others stay"
    _concept("LIMIT", "limiting: 'restrict', 'limit', 'confine'", r"restrict\w*", r"limit\w*", r"confin\w*"),
    _concept("ONLY_THAT", "a restriction: 'only', 'solely', 'alone', 'nothing but', 'except', 'reserved for'",
             r"only", r"solely", r"exclusively", r"alone", r"just(?! because)(?! as)",
             r"nothing (?:else|but|except|more)", r"no other", rf"reserv\w* {_gap(2)}for", r"exactly(?! as)", r"except",
             r"single"),
    # queries
    _concept("EXPAND", "widening: 'expand', 'broaden', 'enrich', 'augment', 'make wider'",
             r"expand\w*", r"expansion", r"broaden\w*", r"widen\w*", r"enrich\w*", r"augment\w*", r"extend\w*",
             rf"mak\w* {_gap(2)}(?:wider|broader|richer)"),
    _concept("INCLUDE", "adding in: 'add', 'include', 'append', 'contain', 'list', 'throw in'",
             r"add(?:s|ed|ing)?", r"includ\w*", r"append\w*", r"throw\w* in", r"list\w*", r"contain\w*",
             r"compris\w*", r"together with", r"plus"),
    _concept("TERMS", "other words: 'synonyms', 'related terms', 'alternative words', 'variants'",
             r"(?:near-)?synonyms?", r"related (?:terms?|words?|nouns?|terminology|concepts?|expressions?|keywords?)",
             r"(?:alternative|(?<!in )other|similar|different|likely|related|associated|neighbouring|adjacent|"
             r"nearby|connected) (?:words?|terms?|phrasings?|wordings?|"
             r"vocabulary)",
             r"variants?",
             rf"words? {_gap(2)}(?:with (?:a )?similar meaning|that mean the same|related)", r"terms? related",
             r"ways of (?:saying|phrasing|putting|expressing|wording|describing)", r"paraphrases?",
             r"semantically related \w+",
             rf"(?:other|different|alternative|various) ways {_gap(6)}(?:said|sa(?:y|ys|ying)|phras\w*|put\w*|"
             r"express\w*|word(?:s|ed|ing)|describ\w*|writ\w*|wrote|ask\w*)",
             rf"(?:words?|terms?|expressions?) {_gap(3)}(?:same|similar) meaning",
             rf"(?:words?|terms?) {_gap(4)}(?:may|might|would|could) (?:contain|use|include)"),
    _concept("KEYWORDS", "keywords: 'a keyword query', 'key nouns', 'key terms'",
             r"key ?words?(?:-style)?", r"key (?:nouns?|terms?|entities|concepts)", r"topic (?:nouns|words)"),
    _concept("QUERY", "the query: 'query', 'search', 'question', 'retrieval'",
             r"quer(?:y|ies)", r"search", r"question", r"retrieval", r"recall"),
    _concept("VERBATIM", "the question as it is: 'verbatim', 'word for word', 'the original wording', 'identical'",
             r"verbatim", r"word for word", r"as is", r"as it is", r"(?:identical|same) (?:to|as) the (?:question|"
             r"original)", r"original (?:wording|words|question|phrasing)", r"close to the (?:original|question)",
             rf"exactly as {_gap(3)}(?:asked|written|phrased|given)", r"bare question",
             rf"repeat\w* {_gap(2)}question", r"unchanged"),
    _concept("REMOVE", "taking out: 'drop', 'remove', 'omit', 'strip'",
             r"drop\w*", r"remov\w*", r"omit\w*", r"strip\w*", r"delet\w*", r"leav\w* out"),
    # answers
    _concept("COMBINE", "combining: 'combine', 'aggregate', 'merge', 'synthesise', 'integrate', 'pull together'",
             r"combin\w*",
             r"(?:the )?union of", r"aggregat\w*", r"merg\w*", r"synthes[iy][sz]\w*", r"integrat\w*", r"join\w*",
             r"cross-referenc\w*",
             rf"(?:pull|bring|brought|put|piec|gather|draw|drew|tie|tied|knit|chain|link|stitch)\w* {_gap(3)}together",
             r"connect\w*", r"link\w*(?! to)",
             r"(?:the )?(?:totality|entirety|sum|whole) of",
             r"consolidat\w*", r"pool\w*",
             rf"compos\w* {_gap(2)}(?:from|of)"),
    _concept("USE", "using context: 'use', 'consider', 'draw on', 'rely on', 'take into account', 'list', 'gather'",
             r"us(?:e|es|ed|ing)", r"consider\w*", r"draw\w* (?:on|from|upon)", r"rel(?:y|ies|ied|ying) on",
             rf"tak\w* {_gap(4)}into account", r"includ\w*", r"list\w*", r"gather\w*", r"collect\w*", r"consult\w*",
             r"incorporat\w*", r"mention\w*",
             rf"(?:needs?|requires?) {_gap(3)}(?:from|of)",
             r"giv(?:e|es|ing)", r"cover\w*", r"report\w*", r"account for", r"reflect\w*", r"bring\w* in",
             r"check\w*",
             r"answer\w* (?:from|using|with|based on)", r"pick\w*", r"choos\w*", r"select\w*",
             r"tak(?:e|es|ing)", r"go\w* through", r"look\w* at"),
    _concept("ALL_ITEMS", "every relevant item: 'all relevant memories', 'every matching item', 'several entries', "
             "'all of them'",
             rf"(?:all|every|each|multiple|several|many|various|different|more than one)(?: of)?(?: the| these| "
             rf"those| its| their)? {_gap(2)}{_ITEM}",
             r"(?:all|each|every one) of them", r"them all",
             # elliptic: "aggregate all relevant", "use every matching"
             r"(?:all|every|each) (?:the )?(?:relevant|matching|pertinent|applicable)$",
             r"all (?:two|three|four|five|six)", r"everything(?! else)",
             rf"the others? {_gap(3)}relevant",
             r"everything (?:relevant|that matches|that is relevant)",
             r"others (?:that are |which are )?relevant"),
    _concept("RELEVANT_ITEMS", "relevant items: 'relevant memories', 'the other relevant ones'",
             rf"(?:other |all |every |any )?relevant (?:{_W} )?{_ITEM}", r"(?:other|more) relevant ones"),
    _concept("ITEM", "context items: 'memories', 'items', 'entries', 'excerpts', 'facts', 'them'", _ITEM, r"them"),
    _concept("ONE_ITEM", "one item: 'the single best match', 'the top memory', 'the memory that best matches'",
             rf"(?:single|one|first|top|best|closest|most relevant|most similar|top-ranked) {_gap(2)}(?:memory|"
             rf"item|excerpt|entry|match|result|piece|one|source|passage|snippet)",
             r"best[- ]match\w*", r"(?:memory|excerpt|item|entry) that best match\w*", r"a single",
             r"the one (?:memory|item|excerpt)"),
    _concept("STOP_AT", "stopping at one: 'stop at'", r"stop\w* at", r"look\w* no further"),
    _concept("BEYOND", "going further: 'look beyond', 'as well as', 'in addition to'",
             r"(?:look|go|search|read)\w* beyond", r"as well as", r"in addition to", r"on top of", r"besides"),
    _concept("ONLY", "a restriction: 'only', 'solely', 'alone', 'ignore the rest'",
             r"only", r"solely", r"just(?! as)", r"alone", r"exclusively", r"ignore the rest", r"matters"),
    _concept("ABSTAIN", "abstaining: 'abstain', 'decline', 'refuse', 'admit', 'leave unanswered'",
             # refusing a topic ("decline questions about bank details") is a safety rule, not abstaining
             rf"(?:abstain\w*|declin\w*|refus\w*)(?! {_gap(4)}(?:questions?|requests?|queries|asks?) (?:about|for|"
             r"on|regarding|concerning|involving|asking))", r"admit\w*", r"hold\w* back", r"withh[oe]ld\w*",
             rf"leav\w* {_gap(3)}(?:blank|unanswered)"),
    _concept("SAY_UNKNOWN", "saying it is not known: \"say 'Not mentioned'\", \"reply 'I don't know'\", 'say so'",
             rf"{_SAY} (?!is |are |was |were |may |might |can |could |should |will ){_gap(4)}{ABSTAIN_PHRASE}",
             r"say so", rf"(?:->|→|=) {ABSTAIN_PHRASE}",
             rf"(?:answer|reply|response|output|result) (?:is|should be|must be|will be|shall be|becomes) "
             rf"{_gap(1)}{ABSTAIN_PHRASE}",
             r"(?:say|state|indicate|admit|declare)\w* so", r"so (?:state|say|indicate|declare|admit)"),
    _concept("UNKNOWN_REPLY", "a reply saying it is not known, 'Not mentioned', 'I don't know' ('no ...': none quoted)",
             ABSTAIN_PHRASE),
    _concept("ANSWER", "answering: 'answer', 'respond', 'reply'", r"answer(?:s|ed|ing)?", r"respond\w*", r"reply"),
    _concept("UNSUPPORTED", "missing support: 'not in the context', 'cannot support', 'lacks', 'no evidence'",
             r"not (?:in|supported|mentioned|covered|there)", r"(?:cannot|cant|can not|do not|does not|dont|doesnt) "
             r"(?:support|contain|mention|cover)", r"lack\w*", r"missing", r"absent", r"unsupported",
             r"no (?:evidence|support|relevant)",
             r"no (?:memory|memories|item|entry|context|source|fact|passage) (?:supports?|backs?|contains?|mentions?|"
             r"covers?)", r"without (?:support|evidence)", r"nothing (?:in|about|supports)",
             r"silent", r"unsure", r"not sure", r"uncertain", r"in doubt",
             rf"unless {_gap(8)}(?:support\w*|contain\w*|mention\w*|cover\w*|back\w* (?:it |them )?up|justif\w*)"),
    _concept("KNOWING", "knowing: 'know', 'sure', 'certain', 'confident'",
             r"know\w*", r"sure", r"certain\w*", r"confiden\w*"),
    _concept("DOUBT", "doubt: 'in doubt', 'unsure', 'uncertain', 'not sure'",
             r"in doubt", r"unsure", r"not sure", r"uncertain\w*", r"doubt\w*", r"unclear"),
    _concept("GUESS", "guessing: 'guess', 'speculate', 'make up', 'invent', 'fabricate', 'hallucinate'",
             r"guess\w*", r"speculat\w*", rf"mak\w* {_gap(2)}up", r"invent\w*", r"fabricat\w*", r"hallucinat\w*",
             r"confabulat\w*", r"fill\w* in the gaps", r"conjectur\w*"),
    _concept("ALWAYS_ANSWER", "always answering: 'always give an answer', 'provide a general response'",
             rf"always {_gap(2)}(?:answer\w*|respond\w*|reply)", r"(?:provide|give) a general response",
             r"every question has an answer", r"accept the question"),
)}
