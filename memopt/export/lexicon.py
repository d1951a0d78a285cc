"""The vocabulary the contradiction check reads rules with: situations, quoted examples, prescriptions.

Everything here is lowercased text patterns, in three groups:

- ``CONCEPTS``: the situations a rule's condition names, made one whatever the wording ("the memories are silent",
  "nothing in the memories answers it" and "no memory covers the fact" are all ``absent``);
- ``QUOTES``: what a quoted example stands for (``"Not mentioned"`` is an abstention, ``"2021-03-07"`` an ISO date,
  ``"I like tea"`` the first person), so a rule's examples say what it prescribes;
- ``CHOICES``: prescriptions that pick one value of a dimension (an output format, a date format, a language, a
  tense, which memory wins, ...): two rules that pick different values of one dimension for one case clash, and so
  do two rules of which one refuses what the other prescribes.

Lengths, counts, memory operations, ids and what a rule keeps or leaves out (its objects) are read in
`memopt.export.reading`, with the verbs and object words below.
"""

from __future__ import annotations

import re

__all__ = ["CONCEPTS", "QUOTES", "CHOICES", "EXCLUSIVE", "NEGATION", "NEGATIVE_VERB", "INCLUDE_VERB", "GENERIC",
           "OBJECT_CONCEPTS", "CONCEPT_PATTERNS",
           "QUOTE_PATTERNS"]

# --- situations (conditions) ---------------------------------------------------------------------------------------
CONCEPTS: tuple[tuple[str, str], ...] = (
    ("@partial", r"\bpartial(?:ly)?\b|\bpartly\b|\bin part\b|\bpart of the answer\b|\bincomplete\b|"
                 r"\bsome but not all\b|"
                 r"\bonly some\b|\bnot (?:fully|completely|entirely)\b"),
    ("@same", r"\bsame (?:thing|information|fact|meaning|content|info)\b|\bsays? the same\b|\balready (?:\w+ ){0,2}"
              r"(?:present|stored|in (?:the )?memor\w*|known|recorded|there|exists?|covered|captured)\b|\brepeats?\b|"
              r"\brepeated\b|\bduplicat\w*|\brestat\w*|\bidentical\b|\bnothing new\b|\bno new (?:information|detail|"
              r"facts?)\b|\badds? nothing\b|\bdiffer\w* only in (?:wording|phrasing)\b|\bonly in (?:wording|"
              r"phrasing)\b|"
              r"\bconvey\w* the same\b|\bparaphras\w* of\b|\bequivalent\b|\bredundant\b"),
    ("@retract", r"\bretract\w*|\btakes? (?:\w+ ){0,2}back\b|\btaken back\b|\btook (?:\w+ ){0,2}back\b|\bwithdraw\w*|"
                 r"\bnever (?:said|true|happened)\b|\b(?:was|is|were) (?:never|not) true\b|\bdenies\b|\bdeny\b|"
                 r"\bdidn'?t mean\b|\bdisavow\w*"),
    ("@cancel", r"\bcancel\w*|\bcall(?:s|ed)? off\b|\bcalled off\b|\bno longer (?:happening|planned)\b|\babandon\w*|"
                r"\bscrapped\b"),
    ("@outdated", r"\boutdated\b|\bout of date\b|\bsupersed\w*|\bobsolete\b|\bstale\b|\bno longer (?:true|valid|"
                  r"current|accurate|correct|the case)\b"),
    ("@conflict", r"\bcontradict\w*|\bconflict\w*|\bdisagree\w*|\binconsisten\w*|\bclash\w*|\bincompatible\b|"
                  r"\bcorrect(?:s|ed|ion|ing)\b|\b(?:is|are|was) (?:wrong|incorrect)\b|\bdiffer\w* from each other\b|"
                  r"\bopposite\b|\bdisput\w*"),
    ("@differ", r"\b(?:totally|completely|entirely) different\b|\bdiffer(?:s|ent)?\b"),
    ("@refine", r"\brefine\w*|\badds? (?:\w+ ){0,2}(?:detail|details|information|specifics?)\b|\bmore (?:detail\w*|"
                r"specific|precise|complete|information)\b|\bextends?\b|\belaborat\w*|\benrich\w*|\bcomplement\w*|"
                r"\bexpands? on\b"),
    ("@topic", r"\b(?:topic|subject) (?:changed|changes|shifts?)\b|\bchange of (?:topic|subject)\b"),
    ("@change", r"\bchang(?:e|es|ed|ing)\b|\bnew value\b|\bmoved?\b"),
    ("@absent", r"\b(?:do|does|did|can|could)(?:n'?t| not) (?:\w+ ){0,2}(?:contain|mention|include|hold|cover|answer|"
                r"address|say|support|state|give|find|know|match)\w*|\bcannot (?:\w+ ){0,2}(?:find|answer|tell|know)\b|"
                r"\bnothing (?:\w+ ){0,4}(?:answers|addresses|covers|mentions|says|supports|holds|matches|relevant|"
                r"worth|stands out)|\bnone of (?:the |your )?memor\w* (?:\w+ ){0,2}(?:answers?|address\w*|covers?|"
                r"mentions?|says?|holds?)\b|\bno (?:existing |stored |relevant |retrieved )?(?:memor\w*|information|"
                r"evidence|answer|mention|facts?|data|record)\b|\bnot (?:in|found|present|mentioned|stated|covered|"
                r"available|known|discussed|given|supported)\b|\b(?:is|are) (?:missing|absent|unknown|silent|"
                r"unavailable|insufficient|lacking|empty)\b|\bmissing\b|\bsilent\b|\black\w*|\binsufficient\b|"
                r"\bunanswerable\b|\bnever (?:discussed|mentioned)\b|\bcan'?t be answered\b|\bcannot be answered\b|"
                r"\bnew information\b|\bnothing (?:relevant|worth)\b|\bnothing to extract\b|\bnot enough\b"),
    ("@present", r"\b(?:contains?|holds?|mentions?|includes?|covers?|answers?|address(?:es)?|supports?|gives?) "
                 r"(?:an? |the )?(?:answer|information|it)\b"),  # read after @absent: the negated forms are gone
    ("@unsure", r"\bunsure\b|\buncertain\w*|\bnot (?:sure|certain|confident)\b|\bambigu\w*|\bunclear\b|\bin doubt\b"),
    ("@q-yesno", r"\byes[/ -]?(?:or[ -])?no\b|\byes-no\b|\byes/no\b|\bqyes\W+(?:or\W+)?qno\b|\bpolar\b"),
    ("@q-howlong", r"\bhow long\b|\bduration\b|\bhow many (?:days|weeks|months|years)\b"),
    ("@q-when", r"\bwhen\b|\bwhat (?:date|day|time|year|month)\b|\b(?:about|on|of) (?:the )?(?:time|dates?|timing)\b|"
                r"\btime\b|\btemporal\b|\bdates?\b"),
    ("@q-why", r"\bwhy\b|\breasons?\b|\bexplanation\b"),
    ("@q-count", r"\bhow (?:many|much|often)\b"),
    ("@q-first", r"\bfirst time\b|\bfor the first\b|\b(?:did|do|happened?|came) first\b|\bfirst (?:did|happened)\b"),
    ("@q-who", r"\bwho\b"),
    ("@q-where", r"\bwhere\b"),
    ("@lang-other", r"\b(?:in|writes? in|wrote in|asked in|written in) (?:another|a different|a foreign|a non-english|"
                    r"french|spanish|german|italian|portuguese|chinese|japanese|russian|korean|arabic|dutch)\b|"
                    r"\bnot in english\b|\bnon-english\b|\bother than english\b"),
    ("@two-parts", r"\btwo parts\b|\bseveral parts\b|\bmultiple parts\b|\btwo people\b|\btwo questions\b"),
    ("@several", r"\bseveral memor\w*|\bmultiple memor\w*|\bmore than one memor\w*|\bmany memor\w*|\btouches\b"),
)
CONCEPT_PATTERNS = tuple((name, re.compile(pattern)) for name, pattern in CONCEPTS)


# --- quoted examples -----------------------------------------------------------------------------------------------
_MONTHS = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|" \
          r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
QUOTES: tuple[tuple[str, str], ...] = (  # the token a quoted example becomes, and what the quote holds
    ("qyes", r"^yes\W*$"),
    ("qno", r"^no\W*$"),
    ("qabstain", r"not mentioned|\bunknown\b|i (?:do not|don't) know|no information|not available|\bn/?a\b|"
                 r"cannot (?:be )?answer|not (?:stated|specified|known|in the (?:memories|conversation))|"
                 r"no answer|insufficient|no data|not enough information"),
    ("qiso", r"^\d{4}-\d{2}(?:-\d{2})?$|\byyyy-mm-dd\b"),
    ("qmdy", rf"^{_MONTHS}\.? \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}}$|^mm/dd/yyyy$"),
    ("qdmy", rf"^\d{{1,2}}(?:st|nd|rd|th)?(?: of)? {_MONTHS}\.?,? \d{{4}}$|^dd/mm/yyyy$|^dd\.mm\.yyyy$"),
    ("qrel", r"\bago\b|\byesterday\b|\btomorrow\b|\blast (?:week|month|year|night|\w+day)\b|\bnext (?:week|month|"
             r"year)\b|\bearlier (?:this|that)\b"),
    ("qspec", r"^(?:maybe|might|perhaps|probably|possibly)\b|\b(?:maybe|might|perhaps) i\b"),
    ("qfirst", r"^i(?:'m|'ve| am| have| was| love| like| ran| went| \w+ed)?\b|^my\b|^we\b"),
    ("qanon", r"^(?:the )?(?:user|speaker(?: [a-z1-9])?|person [a-z1-9]|first speaker|second speaker|participant "
              r"[a-z1-9])$"),
    ("qnumword", r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)\b(?! (?:days?|weeks?|months?|"
                 r"years?) ago)"),
    ("qdigits", r"\b\d+\b"),
)
QUOTE_PATTERNS = tuple((token, re.compile(pattern)) for token, pattern in QUOTES)

# --- prescriptions that choose one value of a dimension ---------------------------------------------------------------
_OUT = r"(?:answer|reply|respond|write|output|return|give|produce|record|store|phrase|express|format|translate|state)"
CHOICES: dict[str, dict[str, str]] = {
    "format": {
        "json": r"\bjson\b|\{\s*qlit\s*:|\bcode blocks?\b",
        "prose": r"\bplain (?:text|prose|english|language|sentences?)\b|\bprose\b|\bfree[- ]text\b|"
                 r"\bnatural language\b|"
                 r"\bflowing (?:paragraph|text|prose)\b|\b(?:as|in) (?:a |one |a single )?(?:flowing )?paragraph\b|"
                 r"\brunning text\b",
        "list": r"\bbullet(?:ed)?[- ]?(?:list|points?)\b|\bbullets\b|\bnumbered list\b|\bmarkdown list\b|"
                r"\blist of bullets\b",
        "table": r"\b(?:as|in|into) (?:a |an )?(?:markdown |html )?table\b|\btable format\b|\btabular\b",
        "label": r"\bonly (?:the )?(?:operation|event|decision) ?(?:name|label|word|type)?\b|\b(?:operation|"
                 r"event) name "
                 r"(?:only|and nothing else)\b|\bonly (?:opadd|opupdate|opdelete|opnone)\b",
        "yaml": r"\byaml\b",
        "csv": r"\bcsv\b|\bcomma[- ]separated\b",
    },
    "markdown": {"markdown": r"\bmarkdown(?! (?:list|table))\b|\bheadings\b|\bbold\b"},
    "date-format": {
        "iso": r"\biso(?: ?8601)?\b|\byyyy-mm-dd\b|\bqiso\b",
        "dmy": r"\bday,? (?:then )?month(?: name)?,? (?:and |then )?year\b|\bdd/mm/yyyy\b|\bdd\.mm\.yyyy\b|"
               r"\bday-month-year\b|\bday first\b|\bqdmy\b",
        "mdy": r"\bmonth(?: name)? first\b|\bmonth,? day,? (?:and )?year\b|\bmm/dd/yyyy\b|\bmonth-day-year\b|"
               r"\bamerican (?:date )?format\b|\bqmdy\b",
    },
    "time-form": {
        "absolute": r"\b(?:exact|calendar|specific|absolute|full|actual|concrete) dates?\b|\bthe date (?:of|"
                    r"on which)\b|"
                    r"\bcompute the date\b|\b(?:give|state|with|answer with|reply with|respond with) (?:the|"
                    r"a) dates?\b|"
                    r"\bdate of the event\b",
        "relative": r"\bhow long ago\b|\bas a duration\b|\bwith a duration\b|\b(?:a|the) duration\b|\brelatively\b|"
                    r"\brelative terms\b|\belapsed time\b|\btime since\b|\bqrel\b(?= (?:form|style))",
    },
    "resolve": {
        "resolve": r"\b(?:convert|resolve|turn|translate|rewrite|replace|map|change)\w* (?:\w+ ){0,6}?(?:into|to|with) "
                   r"(?:an? |the )?(?:absolute|calendar|specific|actual|exact|concrete|real|resolved)? ?dates?\b|"
                   r"\bresolv\w* (?:the |any |all |every )?(?:relative |vague )?(?:dates?|times?|expressions?|"
                   r"references?|mentions?)\b|\bthe resolved (?:absolute )?date\b",
        "keep-relative": r"\b(?:keep|leave|preserve|retain)\w* (?:\w+ ){0,3}?(?:relative |time |temporal )(?:\w+ )?"
                         r"(?:expressions?|references?|dates?|times?|phrases?|mentions?)\b[^;]{0,60}?(?:as (?:spoken|"
                         r"said|written|is|they (?:are|were|appear))|unchanged|verbatim|intact|exactly|untouched|"
                         r"as-is)",
    },
    "language": {
        "input": r"\b(?:same language as|language of|language used (?:in|by)|match\w* the language of|in the language "
                 r"(?:of|that|the|in which)) (?:the |their |each )?(?:question|user|input|query|conversation|speaker|"
                 r"message|dialogue)|\b(?:question|user|input|speaker)'?s'? (?:own )?language\b|\bwhatever language\b|"
                 r"\bin the same language\b|\blanguage the (?:question|user|input) (?:is|was|uses|used|wrote|writes)\b|"
                 r"\bmatch (?:the )?(?:question|user|input)'?s? language\b",
        "english": r"\b(?:in|into) english\b|\benglish only\b|\bonly english\b",
        "french": r"\b(?:in|into) french\b",
        "spanish": r"\b(?:in|into) spanish\b",
        "german": r"\b(?:in|into) german\b",
    },
    "recency": {
        "earliest": r"\bearliest\b|\boldest\b|\bfirst[- ]mentioned\b|\bfirst mention\b|\boriginal (?:one|memory|"
                    r"version|"
                    r"value|statement)\b|\bearlier (?:one|memory|statement|value)\b",
        "latest": r"\bmost recent(?:ly)?\b|\blatest\b|\bnewest\b|\blast[- ]mentioned\b|\bmost up[- ]to[- ]date\b|"
                  r"\blater (?:one|memory|statement|value)\b|\bmost current\b|\brecent one\b",
    },
    "numbers": {
        "digits": r"\b(?:as|in|with|using|use) (?:arabic )?(?:digits|numerals)\b|\bnumbers as digits\b|"
                  r"\bnumeric form\b|"
                  r"\bdigits\b(?= \(qdigits)|\bqdigits\b",
        "words": r"\bspell\w* (?:\w+ ){0,2}out\b|\b(?:in|as) words\b|\bwritten[- ]out numbers\b|\bqnumword\b",
    },
    "tense": {"past": r"\bpast[- ]tense\b|\bsimple past\b|\bin the past\b(?= tense)",
              "present": r"\bpresent[- ]tense\b|\bsimple present\b"},
    "person": {"third": r"\bthird[- ]person\b", "first": r"\bfirst[- ]person\b|\bas the speaker would (?:say|"
                        r"put) it\b"},
    "wording": {
        "verbatim": r"\bverbatim\b|\bword for word\b|\bexact (?:words|wording|phrasing|quotes?)\b|\b(?:original|own) "
                    r"(?:wording|words|phrasing)\b|\bexactly as (?:written|spoken|said|they)\b|\bquote (?:the )?"
                    r"(?:speakers?|users?|them)\b|\bclose to the original\b",
        "paraphrase": r"\bparaphras\w*|\brephras\w*|\breword\w*|\bin your own words\b|\b(?:use|with) synonyms\b",
    },
    "merging": {
        "merge": r"\b(?:merge|combine|group|bundle|consolidate)\w* (?:\w+ ){0,3}?(?:facts|details|pieces|information|"
                 r"ideas|statements)\b[^;]{0,30}\b(?:into|in|as) (?:one|a single|the same)\b",
        "split": r"\bsplit (?:them|it|(?:\w+ ){0,3}into (?:multiple|several|separate|individual))\b|\bone (?:single )?"
                 r"(?:piece of information|idea|fact|detail) per (?:fact|entry)\b|\b(?:a )?single piece of "
                 r"information\b|\batomic\b",
    },
    "missing": {
        "abstain": r"\bqabstain\b|\b(?:say|reply|answer|respond|state|admit|output|return|write|tell)\w* (?:\w+ ){0,3}?"
                   r"(?:that )?(?:you|i) (?:do not|don't|cannot|can't) (?:know|tell|answer)\b|\b(?:say|reply|answer|"
                   r"respond|state|output|return|write)\w*(?: with| that)? (?:\w+ ){0,3}?(?:unknown|not mentioned|"
                   r"not available|unavailable|not known|no answer|cannot be answered|not in the memories|n/a|"
                   r"insufficient)\b|\babstain\w*|\bdecline to answer\b|\brefuse to answer\b|\b(?:say|admit) so\b",
        "guess": r"\bguess\w*|\bbest estimate\b|\bestimate\b|\binfer\w* (?:a |an |the )?(?:plausible|likely|probable|"
                 r"most likely|reasonable)\b|\b(?:most|more) (?:likely|probable|plausible) answer\b|\bcommit to "
                 r"(?:an? |the )?(?:\w+ ){0,2}answer\b|\balways (?:give|provide|produce|offer) an answer\b|"
                 r"\b(?:give|provide) (?:a |an |the )?(?:plausible|likely|probable) answer\b|\bmake (?:something|one) "
                 r"up\b|\banswer anyway\b|\bgeneral response\b",
    },
    "ids": {
        "keep": r"\bkeep (?:that |the |this |its |their |the same |the original )?(?:memory'?s? |existing )?ids?\b|"
                r"\bsame ids?\b|\breuse (?:the |its |their )?ids?\b|\bids? (?:stays?|remains?|unchanged)\b|\bids? from "
                r"the input(?: ids)? only\b|\bkeep (?:the )?(?:memory )?ids unchanged\b|\b(?:original|existing) ids?\b",
        "new": r"\b(?:fresh|new|newly generated|different|brand-new|another) ids?\b|\bgenerat\w* (?:an? |any )?(?:new |"
               r"fresh )?ids?\b|\bassign\w* (?:an? |any )?(?:new |fresh )?ids?\b",
    },
    "bare-yesno": {
        "bare": r"\b(?:only|just|simply|bare|nothing but|solely|single[- ]word|one[- ]word)\W+(?:with\W+)?(?:a\W+)?"
                r"(?:qyes|yes)\W+(?:or|/)\W+(?:qno|no)\b|\b(?:qyes|yes)\W+(?:or|/)\W+(?:qno|no)\W+(?:only|and nothing "
                r"else|alone|nothing else)\b",
    },
    "empty": {
        "empty": r"\b(?:return|output|give|produce|respond with|reply with|leave)\w* (?:an? )?(?:empty|blank) "
                 r"(?:\w+ ){0,2}?(?:list|array|result|object|json|output)\b|\b(?:return|output|respond with)\w* "
                 r"nothing\b|\bqempty\b|\bleave (?:the|it) (?:\w+ )?empty\b|\bempty (?:facts )?list\b",
    },
    "reasoning": {
        "reasoning": r"\bexplain\w*|\bexplanations?\b|\breasoning\b|\bstep[- ]by[- ]step\b|\bshow (?:your|the) (?:work|"
                     r"steps)\b|\bjustif\w*|\bwalk (?:\w+ ){0,2}through\b|\bthink (?:aloud|out loud)\b|\bhow you "
                     r"(?:reached|arrived|got)\b|\bchain of thought\b|\brationale\b|\bcommentary\b",
    },
}
EXCLUSIVE = frozenset({"format", "date-format", "time-form", "resolve", "language", "recency", "numbers", "tense",
                       "person", "wording", "merging", "missing", "ids"})  # its values exclude each other

NEGATION = re.compile(r"\b(?:never|not(?! (?:only|just|merely|solely)\b)|no(?! (?:matter|more than|fewer than|later "
                      r"than|less than|longer)\b)|don'?t|do not|does not|doesn'?t|must not|mustn'?t|should not|"
                      r"shouldn'?t|cannot|can'?t|avoid\w*|without|nor|refrain from|under no circumstances|stop|"
                      r"forbidden|prohibited|not allowed)\b")
NEGATIVE_VERB = re.compile(r"\b(?:omit\w*|skip\w*|drop\w*|ignor\w*|exclud\w*|leav\w* (?:\w+ ){0,4}?out|discard\w*|"
                           r"remov\w*|strip\w*|filter\w* out|cut\w*|disregard\w*|keep (?:\w+ ){0,4}?out|get rid of|"
                           r"leave aside|refrain from)\b")
INCLUDE_VERB = re.compile(r"\b(?:(?:begin|start|end|open)s?(?: [\w']+){0,6}? with|(?:include|mention|record|store|"
                          r"capture|keep|note|save|remember|track|list|report|state|extract|preserve|retain|log|cite|"
                          r"reference|put|contain|use|give|write down|reveal|show|refer to)(?:s|d)?)\b")
GENERIC = frozenset("""fact facts information info detail details thing things anything everything something statement
statements content data entry entries item items piece pieces bit bits stuff memory memories answer answers summary
summaries output response responses reply replies query queries question questions list text any all every each only
also too always never specific relevant important new actual exact exactly own speaker speakers people person user users
participant participants they them their it its this that these those one session mention mentioned mentions
word words way form format""".split())
OBJECT_CONCEPTS: tuple[tuple[str, str], ...] = (
    ("@date", r"\bdates?\b|\btimestamps?\b|\bcalendar\b"),
    ("@name", r"\bnames?\b|\bnamed\b"),
    ("@id", r"\bids?\b|\bidentifiers?\b"),
    ("@source", r"\bsources?\b|\bwhere (?:\w+ ){0,4}came from\b|\bwhich memor\w+\b|\bcitations?\b"),
    ("@emotion", r"\bemotions?\b|\bemotional\b|\bfeelings?\b|\bfelt\b|\bfeel\b|\bmoods?\b|\bsentiments?\b"),
    ("@greeting", r"\bgreetings?\b|\bhellos?\b|\bgoodbyes?\b|\bfarewells?\b"),
    ("@smalltalk", r"\bsmall talk\b|\bchit-?chat\b|\bfiller\b|\bpleasantries\b|\bbanter\b"),
    ("@speculation", r"\bspeculat\w*|\bhypothetic\w*|\bqspec\b|\bmaybe\b|\bmight\b|\bguesses\b"),
    ("@reasoning", r"\breasoning\b|\bexplanations?\b|\bjustifications?\b"),
)
