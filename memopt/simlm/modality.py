"""Mood: clauses that imagine, plan or report instead of instructing.

A reader of English does not take every clause with an instruction's words for an instruction:

- a counterfactual or a guess ("one might update only on contradiction", "in a multi-hop benchmark you would
  combine memories") imagines another setting, and a plan ("a future version may ask for dates", "expansion might be
  added later") says what is not asked yet. Such a clause is marked ``rationale``: it instructs nothing, like an
  explanation. The marks: a pronoun subject ("one", "you", "we", ...) with "would" / "might" / "could", or a future
  marker ("future", "later", "eventually") with a modal of possibility;
- words someone else says, quoted after a verb of asking or saying with a third party as its subject ("if the user
  asks you to 'keep every detail'"), are that person's speech, not the instruction's topic: they are dropped;
- a hedge between commas (", by itself,", ", on its own,") qualifies without changing what the clause says: it is
  dropped, so a negation before it reaches past it ("is never, by itself, grounds for ...").
"""

from __future__ import annotations

from memopt.simlm.words import CLAUSE_PUNCT, Word, with_

__all__ = ["drop_hedges", "drop_reported_speech", "mark_irrealis"]

_SUBJECTS = frozenset({"one", "you", "we", "they", "i", "someone", "somebody"})
_COUNTERFACTUAL = frozenset({"would", "might", "could"})
_POSSIBLE = frozenset({"may", "might", "could", "would", "will"})
_SETTINGS = frozenset({"in", "on", "for", "with", "under", "elsewhere", "otherwise", "there"})
_FUTURE = frozenset({"future", "eventually", "someday"})
_REPORTING = frozenset({"asks", "ask", "asked", "requests", "request", "requested", "says", "say", "said", "tells",
                        "tell", "told", "writes", "wrote", "types", "typed", "wants", "wanted"})
_THIRD_PARTY = frozenset({"user", "users", "they", "he", "she", "someone", "somebody", "customer", "person", "speaker",
                          "people", "human", "client"})
_BRIDGE = frozenset({"you", "me", "us", "to", "for", "that", ":", ","})
# plans and proposals: the sentence says what the team may do later, not what to do now
_PLAN_PHRASES = (("on", "the", "roadmap"), ("on", "the", "backlog"), ("on", "our", "roadmap"), ("on", "our", "backlog"),
                 ("planned", "for"), ("is", "planned"), ("are", "planned"), ("scheduled", "for"), ("under", "review"),
                 ("under", "discussion"), ("being", "discussed"), ("discussing", "whether"), ("a", "proposal"),
                 ("are", "considering"), ("is", "considering"), ("were", "considering"), ("thinking", "about"),
                 ("we", "plan"), ("we", "intend"), ("we", "hope"), ("we", "may"), ("we", "might"), ("we", "could"),
                 ("if", "we", "ever"), ("were", "we", "to"), ("someday",), ("wishlist",), ("roadmap",))
_LATER_THINGS = frozenset({"version", "versions", "release", "releases", "sprint", "quarter", "year", "iteration",
                           "milestone", "update", "phase"})
_LATER_MARKS = frozenset({"later", "future", "next", "upcoming", "coming", "subsequent"})
# the input described to the reader: "the memories you see carry ...", "the text you get is ..."
_GIVEN = frozenset({"see", "get", "receive", "read", "are"})
_GIVEN_PARTICIPLES = frozenset({"given", "shown", "sent", "handed", "provided"})
# a description of the data: "transcripts usually include ...", "sessions tend to contain ..."
_FREQUENCY = frozenset({"usually", "often", "typically", "frequently", "sometimes", "generally", "mostly", "rarely",
                        "tend", "tends", "commonly", "normally"})
_HOLDS = frozenset({"include", "includes", "contain", "contains", "have", "has", "carry", "carries", "mention",
                    "mentions", "hold", "holds", "feature", "features", "are", "is", "come", "comes", "span", "spans",
                    "involve", "involves", "run", "runs", "quote", "quotes", "cite", "cites", "list", "lists",
                    "reference", "references", "describe", "describes"})
# the input, as the subject of a description: "the transcripts contain names", "messages frequently cite numbers"
_INPUT = frozenset({"memories", "messages", "transcripts", "sessions", "conversations", "chats", "turns", "notes",
                    "dialogues", "logs", "context", "input", "inputs", "transcript", "conversation", "session"})
_DIRECTIVE_WORDS = frozenset({"must", "should", "shall", "need", "needs", "always", "never", "please", "you", "do",
                              "dont", "make", "ensure"})
_HEDGES = (("by", "itself"), ("in", "itself"), ("on", "its", "own"), ("by", "themselves"), ("on", "their", "own"),
           ("alone",), ("as", "such"))


def _clauses(words: list[Word]) -> list[tuple[int, int]]:
    """Spans of the clauses (at clause punctuation, commas and "but") a mood covers."""
    spans, start = [], 0
    for k, w in enumerate(words):
        if not w.quoted and (w.text in CLAUSE_PUNCT or w.text in (",", "but")):
            spans.append((start, k))
            start = k + 1
    return spans + [(start, len(words))]


def _irrealis(words: list[Word]) -> bool:
    texts = [w.text if not w.quoted else "" for w in words]
    for k, t in enumerate(texts[:-1]):
        # the subject of the clause, at its start or after a setting ("in a stricter setup one might"), not of a
        # relative clause ("the words they would use")
        subject = k == 0 or texts[0] in _SETTINGS and k <= 7
        if t in _SUBJECTS and texts[k + 1] in _COUNTERFACTUAL and subject:
            return True
    later = any(t in _FUTURE for t in texts) or texts[-1:] == ["later"] or "later" in texts and \
        texts[texts.index("later") + 1:texts.index("later") + 2] in (["on"], [","])
    return later and any(t in _POSSIBLE for t in texts)


def _has(texts: list[str], phrase: tuple[str, ...]) -> bool:
    n = len(phrase)
    return any(tuple(texts[k:k + n]) == phrase for k in range(len(texts) - n + 1))


def _planned(texts: list[str]) -> bool:
    """A plan, a proposal or a counterfactual protasis ("had the extractor resolved ...", "were we to ...")."""
    if texts[:1] == ["had"] or texts[:1] == ["were"] and "to" in texts[2:5]:
        return True
    if any(_has(texts, p) for p in _PLAN_PHRASES):
        return True
    return any(t in _LATER_MARKS and _LATER_THINGS & set(texts[k + 1:k + 3]) for k, t in enumerate(texts))


def _described(texts: list[str]) -> bool:
    """A description of the input, not an instruction: its subject is what "you see / get / are given", or it says
    what the data usually holds."""
    for k, t in enumerate(texts[:-2]):
        if t == "you" and k > 0 and (texts[k + 1] in _GIVEN_PARTICIPLES or texts[k + 1] in _GIVEN and (
                texts[k + 1] != "are" or texts[k + 2] in _GIVEN_PARTICIPLES)) and texts[0] in ("the", "what", "all"):
            return True
    if _DIRECTIVE_WORDS & set(texts):
        return False
    for k, t in enumerate(texts):
        # "sessions are often long and mention many names": a verb of holding soon after the frequency
        if t in _FREQUENCY and k > 0 and _HOLDS & set(texts[k + 1:k + 5]):
            return True
    # "the transcripts contain names, dates and prices": the input holds something, in the present
    start = 1 if texts[:1] in (["the"], ["these"], ["our"], ["client"], ["user"], ["customer"]) else 0
    return len(texts) > start + 1 and texts[start] in _INPUT and texts[start + 1] in _HOLDS - {"are", "is", "run",
                                                                                                "runs", "come"}


def _sentence_planned(words: list[Word]) -> bool:
    texts = [w.text if not w.quoted else "" for w in words]
    return _planned(texts)


def mark_irrealis(words: list[Word]) -> list[Word]:
    """Mark the clauses that imagine another setting or plan a later one, and descriptions of the input: they
    instruct nothing. A plan or counterfactual protasis covers its sentence up to a ";"."""
    out = list(words)
    end = next((k for k, w in enumerate(out) if w.text == ";" and not w.quoted), len(out))
    if _sentence_planned(out[:end]):
        for k in range(end):
            out[k] = with_(out[k], rationale=True)
    for lo, hi in _clauses(out):
        texts = [w.text if not w.quoted else "" for w in out[lo:hi]]
        if hi > lo and (_irrealis(out[lo:hi]) or _described(texts)):
            for k in range(lo, hi):
                out[k] = with_(out[k], rationale=True)
    return out


def drop_reported_speech(words: list[Word]) -> list[Word]:
    """Without the quoted words a third party says or asks for ("the user asks you to 'keep all details'")."""
    out: list[Word] = []
    k = 0
    while k < len(words):
        w = words[k]
        if w.quoted and (not out or not out[-1].quoted):
            # the verb of saying right before the quote ("asks you to", "says:"), its subject a third party
            verb = len(out) - 1
            while verb >= 0 and out[verb].text in _BRIDGE:
                verb -= 1
            speaker = {x.text for x in out[max(0, verb - 3):verb]}
            if verb >= 0 and out[verb].text in _REPORTING and _THIRD_PARTY & speaker:
                while k < len(words) and words[k].quoted:
                    k += 1
                continue
        out.append(w)
        k += 1
    return out


def drop_hedges(words: list[Word]) -> list[Word]:
    """Without a hedge between commas (", by itself,"): it does not change what the clause says."""
    out = list(words)
    for i in range(len(out) - 1, -1, -1):
        if out[i].text != "," or out[i].quoted:
            continue
        for hedge in _HEDGES:
            n = len(hedge)
            if tuple(w.text for w in out[i + 1:i + 1 + n]) == hedge and i + 1 + n < len(out) and \
                    out[i + 1 + n].text == ",":
                del out[i:i + 2 + n]
                break
    return out
