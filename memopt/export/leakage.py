"""Users' data in a prompt about to be shipped: what the training split says, in any form a prompt can repeat it.

`DataFacts.of(conversations)` reads what a run saw, once; `leaks(sentence, facts)` says what of it a sentence of a
prompt holds:

- **names**: the speakers, and the proper names of the turns and answers (people, pets, places, organisations,
  titles: capitalised words and runs of them, a run's inner ``of``, ``del``, ``&`` included), matched in any case
  ("alex's pet is milo"), except that a name the data also writes as a lower-case word, or capitalises only at a
  sentence's start, needs its capitals or a second name beside it, so "pickles" on a burger is not the cat Pickles;
- **numbers**: amounts of money, clock times and durations written either way ("3:52", "3 hours 52 minutes"),
  and counts with what they count ("a 412-day streak", "640 families");
- **dates**: a day of a month the data holds (a session date, a date said in a turn or a gold answer), written
  any way ("25 May 2023", "May 25", "2023-05-25"), and a month of a year ("March 2022");
- **questions**: a training question, most of its words;
- **verbatim runs**: ``NGRAM`` words of a turn in a row;
- **paraphrases**: a sentence sharing three or more rare words of one conversation (words the other
  conversations do not use), which pins down one user's facts without a name or a number.

Generic words and public knowledge pass: months and weekdays, languages, numbers without their unit, years on
their own, a place or a name the data does not hold.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from memopt.core.text import MONTHS, STOPWORDS, WEEKDAYS, find_dates, parse_session_date, stem, words

__all__ = ["DataFacts", "leaks", "names_in", "NGRAM"]

NGRAM = 6
RARE_SHARED = 3  # rare words of one conversation a sentence must share to pin it down
_CAPITAL = re.compile(r"(?<![\w$])(?:[A-Z][\w'’.-]*[A-Za-z0-9]|[A-Z])(?:(?:\s+(?:of|del|de|la|le|von|van|the|&|"
                      r"da|di|du))*\s+(?:[A-Z][\w'’.-]*[A-Za-z0-9]|[A-Z]{2,}|\d+[A-Za-z]*))*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"“(]\s*|\n\s*[-*•\d.)]*\s*)$")
_GENERIC = frozenset(w.lower() for w in [
    *MONTHS, *WEEKDAYS, "I", "I'm", "I've", "I'd", "I'll", "Mr", "Mrs", "Ms", "Dr", "St", "Mom", "Dad", "Mum",
    "Nan", "Grandma", "Grandpa", "English", "French", "Spanish", "German", "Portuguese", "Italian", "Chinese",
    "Japanese", "Russian", "Arabic", "Hindi", "Korean", "Dutch", "Greek", "Polish", "Swedish", "LGBTQ", "OK", "Okay",
    "Hey", "Hi", "Hello", "Yes", "No", "Yeah", "Wow", "Oh", "Aww", "Ha", "Haha", "Congrats", "Congratulations",
    "Thanks", "Thank", "Sure", "Nice", "Good", "Great", "Love", "Same", "Huge", "Jealous", "Impressive", "Amazing",
    "Perfect", "Poor", "Proud", "Glad", "Bad", "Back", "Classic", "Still", "Late", "Save", "Tell", "Recovering",
    "Greyhounds", "Family", "Silver", "Good", "Honestly", "Meanwhile", "Intense", "Every", "Day", "Today",
    "Yesterday", "Tomorrow", "Nobody", "Somebody", "Everyone", "Make", "Let", "Take", "Keep", "Tell", "Ask",
    "Maybe", "Also", "Sounds", "Just", "Finally", "Anyway", "Btw", "Drinks", "Glassblowing"])
_AMOUNT = re.compile(r"(?:[$€£¥]\s?(?P<a>\d[\d,]*(?:\.\d+)?)(?:\s?(?P<k>[kKmM])\b)?|(?P<b>\d[\d,]*(?:\.\d+)?)\s?"
                     r"(?:dollars|euros|pounds|usd|eur|gbp)\b)", re.IGNORECASE)
_CLOCK = re.compile(r"(?<![\d:])(?P<h>\d{1,2}):(?P<m>\d{2})(?![\d:])")
_DURATION = re.compile(r"\b(?P<h>\d{1,2})\s*(?:hours?|hrs?|h)\b\W{0,3}(?:and\s+)?(?P<m>\d{1,2})\s*"
                       r"(?:minutes?|mins?|m)\b", re.IGNORECASE)
_COUNT = re.compile(r"(?<![\d$€£.,:/-])(?P<n>\d{1,3}(?:,\d{3})+|\d+)(?:st|nd|rd|th)?(?![\d:/]|,\d)")
_MONTH_YEAR = re.compile(rf"\b(?P<m>{'|'.join(MONTHS)})\s+(?:of\s+)?(?P<y>(?:19|20)\d\d)\b")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _plain_word(word: str, lowercase: set[str]) -> bool:
    """Whether a capitalised word at a sentence's start is an ordinary word (then it names nothing)."""
    low = word.lower()
    return (low in _GENERIC or low in STOPWORDS or low in lowercase or "'" in word or "’" in word
            or low.endswith(("ing", "ed", "ly")) or low.rstrip("s") in _GENERIC)


def _proper_names(text: str, lowercase: set[str], mid: set[str] | None = None) -> set[str]:
    """The capitalised runs of a text that name something, whole ("Oakridge Greyhound Rescue", "Comet"): a run past
    a sentence's first word, or one at its start that is not an ordinary word; a possessive ("Denver's Highland")
    names its owner and what follows apart."""
    found = set()
    for m in _CAPITAL.finditer(text):
        at_start = bool(_SENTENCE_START.search(text[: m.start()]))
        whole = m.group().strip(" .")
        parts = re.split(r"['’]s\s+|['’]s$", whole)
        if len(parts) > 1 and len(whole.split()) > 1:  # a possessive: the owner, and the whole run
            parts = [parts[0], whole]
        for part in parts:
            run = part.strip(" .")
            tokens = run.split()
            while tokens and (tokens[0].lower() in _GENERIC or at_start and len(tokens) > 1
                              and _plain_word(tokens[0], lowercase)):
                tokens, at_start = tokens[1:], False
            run = " ".join(tokens)
            if not run or not run[0].isupper() or len(run) < 2:
                continue
            if len(tokens) == 1 and (at_start and _plain_word(run, lowercase) or run.lower() in _GENERIC
                                     or run.lower() in STOPWORDS or run.rstrip("s").lower() in _GENERIC):
                continue
            found.add(run)
            if mid is not None and not at_start:
                mid.add(run)
            at_start = False
    return found


def _counts(text: str) -> list[tuple[float, set[str]]]:
    """Each number of a text that is not money, a clock time or a year, with the stems of the words around it."""
    out = []
    masked = _AMOUNT.sub(" ", _CLOCK.sub(" ", text))
    for m in _COUNT.finditer(masked):
        value = _number(m["n"])
        if 1900 <= value <= 2100 and "," not in m["n"]:
            continue
        before = words(masked[max(0, m.start() - 25): m.start()])[-2:]
        after = words(masked[m.end(): m.end() + 30])[:2]
        out.append((value, {stem(w) for w in before + after if w not in STOPWORDS and not w.isdigit()}))
    return out


@dataclass
class DataFacts:
    """What a run's conversations say that a prompt must not repeat (see the module docstring)."""

    names: set[str] = field(default_factory=set)
    amounts: set[float] = field(default_factory=set)
    clocks: set[tuple[int, int]] = field(default_factory=set)
    counts: dict[float, set[str]] = field(default_factory=lambda: defaultdict(set))
    days: set[tuple[int, int]] = field(default_factory=set)
    month_years: set[tuple[int, int]] = field(default_factory=set)
    questions: list[frozenset[str]] = field(default_factory=list)
    ngrams: set[tuple[str, ...]] = field(default_factory=set)
    rare: dict[str, frozenset[str]] = field(default_factory=dict)  # conversation → its rare stems
    common: set[str] = field(default_factory=set)  # words, not only names, in lower case ("rose", "will", "busy")

    @classmethod
    def of(cls, conversations: Iterable[object]) -> DataFacts:
        """The facts of LoCoMo-form conversations (`memopt.data.model.Conversation`)."""
        facts = cls()
        texts_of: dict[str, list[str]] = {}
        for conv in conversations:
            texts = [t.text for s in conv.sessions for t in s.turns]
            answers = [str(c.gold) for c in conv.cases]
            questions = [c.question for c in conv.cases]
            texts_of[conv.sample_id] = texts + answers
            facts.names.update(n.strip() for n in (conv.speaker_a, conv.speaker_b) if n and n.strip())
            for session in conv.sessions:
                day = parse_session_date(session.date_time or "")
                if day is not None:
                    facts.days.add((day.day, day.month))
            for text in texts + answers + questions:
                facts.ngrams.update(_runs(words(text)))
            facts.questions += [frozenset(stem(w) for w in words(q) if w not in STOPWORDS) for q in questions]
        lowercase = {w for texts in texts_of.values() for t in texts for w in re.findall(r"\b[a-z][a-z'’]+\b", t)}
        mid: set[str] = set(facts.names)  # the speakers, and the names the data capitalises inside a sentence
        for texts in texts_of.values():
            for text in texts:
                facts.names.update(_proper_names(text, lowercase, mid))
                facts._numbers(text)
        facts.names = {n for n in facts.names if n.lower() not in _GENERIC}
        # a name the data writes in lower case, or capitalises only at a sentence's start ("Busy week!"), is also
        # a word: in lower case it counts only beside another name
        facts.common = {n.lower() for n in facts.names if n not in mid} | lowercase
        facts._rare(texts_of)
        return facts

    def _numbers(self, text: str) -> None:
        for m in _AMOUNT.finditer(text):
            value = _number(m["a"] or m["b"]) * (1000 if (m["k"] or "").lower() == "k" else 1)
            self.amounts.add(value)
        for m in _CLOCK.finditer(text):
            self.clocks.add((int(m["h"]), int(m["m"])))
        for value, context in _counts(text):
            self.counts[value] |= context
        for date in find_dates(text):
            if date.day is not None and date.month is not None:
                self.days.add((date.day, date.month))
            elif date.month is not None and date.year is not None:
                self.month_years.add((date.month, date.year))
        for m in _MONTH_YEAR.finditer(text):
            self.month_years.add((MONTHS.index(m["m"]) + 1, int(m["y"])))

    def _rare(self, texts_of: dict[str, list[str]]) -> None:
        """Per conversation, its content stems no other conversation uses (at least 4 letters, not generic)."""
        stems_of = {sid: {stem(w) for t in texts for w in words(t) if w not in STOPWORDS and len(w) >= 4
                          and not w.isdigit() and w.lower() not in _GENERIC} for sid, texts in texts_of.items()}
        users: dict[str, int] = defaultdict(int)
        for found in stems_of.values():
            for s in found:
                users[s] += 1
        self.rare = {sid: frozenset(s for s in found if users[s] == 1) for sid, found in stems_of.items()}


def _runs(tokens: list[str], n: int = NGRAM) -> set[tuple[str, ...]]:
    """Runs of ``n`` words holding at least two content words (a run of function words is nobody's data)."""
    grams = (tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    return {run for run in grams if sum(w not in STOPWORDS for w in run) >= 2}


def _has_name(sentence: str, name: str, *, any_case: bool = False) -> bool:
    return bool(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", sentence, re.IGNORECASE if any_case else 0))


def names_in(sentence: str, names: Iterable[str], common: set[str], *, seed: str = "") -> list[str]:
    """The names of ``names`` a sentence holds and ``seed`` does not, in any case ("alex" is Alex): a name that is
    also a word of the data or of English in lower case ("rose", "will") counts only with its capitals or beside
    another name of the data in the sentence."""
    exact, lower, weak = set(), set(), set()
    for name in names:
        if _has_name(seed, name, any_case=True):
            continue
        if _has_name(sentence, name):
            exact.add(name)
        elif _has_name(sentence, name, any_case=True):
            plain = name.lower() in common or all(w in common or w in STOPWORDS or w in _GENERIC
                                                  for w in name.lower().split())
            (weak if plain else lower).add(name)
    strong = exact | lower
    return sorted(strong | (weak if strong else set()))


def leaks(sentence: str, facts: DataFacts, *, seed: str = "") -> list[str]:
    """What of the data ``sentence`` holds (each as a short description); what ``seed`` holds too is not counted."""
    found: list[str] = []
    names = names_in(sentence, facts.names, facts.common, seed=seed)
    if names:
        found.append(f"name(s) {', '.join(names[:4])}")
    for m in _AMOUNT.finditer(sentence):
        value = _number(m["a"] or m["b"]) * (1000 if (m["k"] or "").lower() == "k" else 1)
        if value in facts.amounts and m.group() not in seed:
            found.append(f"the amount {m.group().strip()}")
    for pattern in (_CLOCK, _DURATION):
        for m in pattern.finditer(sentence):
            if (int(m["h"]), int(m["m"])) in facts.clocks and m.group() not in seed:
                found.append(f"the time {m.group().strip()}")
    seed_counts = {v for v, _ in _counts(seed)}
    for value, context in _counts(sentence):
        known = facts.counts.get(value)
        if known is not None and value not in seed_counts and (value >= 100 or context & known):
            found.append(f"the number {value:g} ({', '.join(sorted(context & known)) or 'as in the data'})")
    seed_dates = {(d.day, d.month) for d in find_dates(seed)}
    for date in find_dates(sentence):
        if date.day and date.month and (date.day, date.month) in facts.days and (date.day, date.month) not in \
                seed_dates:
            found.append(f"the date {date.text}")
        elif date.day is None and date.month and date.year and (date.month, date.year) in facts.month_years:
            found.append(f"the date {date.text}")
    mine = {stem(w) for w in words(sentence) if w not in STOPWORDS}
    for question in facts.questions:
        if len(question) >= 3 and len(question & mine) >= 0.75 * len(question):
            found.append("a training question")
            break
    runs = _runs(words(sentence)) & facts.ngrams
    if runs - _runs(words(seed)):
        found.append(f"{NGRAM} words of a turn in a row ({' '.join(sorted(runs)[0])!r})")
    if not found:
        for rare in facts.rare.values():
            shared = sorted(mine & rare)
            if len(shared) >= RARE_SHARED:
                found.append(f"words only one user's conversation holds ({', '.join(shared[:5])})")
                break
    return list(dict.fromkeys(found))
