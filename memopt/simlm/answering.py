"""SimLM's question answering: rank context items by lexical overlap, pull out a typed answer span.

The answer type comes from the question word (when / where / who / how many / how long / the name
of / anything else); the span is a date, a capitalised place or person, a number, a name after
"named", or the item's words that the question does not already contain. A context may open with
"Current date: <date>" (the day the question is asked); then "how many days / weeks / months ago"
(or "since") is answered by counting from the best item's date (its own date, a relative date in
it resolved against its day) to that date; without it, such a question gets the item's date.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from memopt.core.text import (
    DATE_PATTERN,
    MONTHS,
    STOPWORDS,
    WEEKDAYS,
    clauses,
    content_words,
    find_dates,
    find_relative_dates,
    format_date,
    parse_session_date,
    resolve_relative_dates,
    stem,
    words,
)
from memopt.judge.metrics import is_abstention
from memopt.simlm.reading import Item, context_items

__all__ = ["Question", "analyze", "answer", "query_terms", "is_abstention", "NOT_MENTIONED"]

NOT_MENTIONED = "Not mentioned"
COMBINE_SHARE = 0.7  # combine_all also answers from items scoring at least this share of the best item
_QUESTION_WORDS = frozenset(
    "what when where who whom which why how does did is are was were has have do can would will could "
    "should kind type name names".split()
)
_NOT_NAMES = frozenset(w.lower() for w in MONTHS + WEEKDAYS) | _QUESTION_WORDS | STOPWORDS
_CAPITALISED = re.compile(r"\b([A-Z][a-z]+(?:'s)?)\b")


@dataclass(frozen=True)
class Question:
    """What SimLM reads off a question: its type, the people it names, its topic stems."""

    text: str
    kind: str
    names: frozenset[str]
    topic: frozenset[str]


_ELAPSED = re.compile(r"^how (many|much time|long)\b.*\b(ago|since|passed|elapsed)\b")
_CURRENT_DATE = re.compile(r"^\s*current date:\s*(?P<date>.+?)\s*$", re.IGNORECASE)


def analyze(question: str) -> Question:
    """Classify a question and collect its names and topic stems (names included)."""
    q = question.strip()
    low = q.lower()
    if _ELAPSED.match(low):
        kind = "elapsed"
    elif re.match(r"^(when|what (date|day|year|month|time))\b", low) or " when " in f" {low} " and "how" not in low[:4]:
        kind = "when"
    elif low.startswith("where") or re.search(r"\b(which|what) (city|country|place|town|state)\b", low):
        kind = "where"
    elif low.startswith(("who ", "whom ")):
        kind = "who"
    elif low.startswith("how many") or low.startswith("how much"):
        kind = "count"
    elif low.startswith("how long"):
        kind = "duration"
    elif re.search(r"\bname[sd]?\b|\bcalled\b", low):
        kind = "name"
    else:
        kind = "what"
    names = frozenset(
        m.group(1).removesuffix("'s") for m in _CAPITALISED.finditer(q)
        if m.group(1).lower().removesuffix("'s") not in _NOT_NAMES
    )
    topic = frozenset(stem(w) for w in content_words(q) if w not in _QUESTION_WORDS)
    return Question(q, kind, names, topic)


def _related(topic: frozenset[str]) -> frozenset[str]:
    return frozenset(stem(r) for t in topic for w in _RELATED_BY_STEM.get(t, ()) for r in (w,))


def _name_hits(q: Question, item: Item) -> int:
    return sum(stem(n.lower()) in item.stems for n in q.names)


def _score(q: Question, item: Item) -> float:
    return len(q.topic & item.stems) + 0.5 * len(_related(q.topic) & item.stems)


def _supported(q: Question, item: Item, *, literal: bool = False) -> bool:
    """Every name the question uses is in the item, and so is some other word of its topic (or a related one).

    ``literal``: a related word does not count, only the question's own words (how an abstaining reader
    checks support: evidence told in other words reads as unsupported).
    """
    if any(stem(n.lower()) not in item.stems for n in q.names):
        return False
    name_stems = {stem(n.lower()) for n in q.names}
    rest = q.topic - name_stems
    return len(q.names) >= 2 or not rest or bool((rest if literal else rest | _related(rest)) & item.stems)


_SPEAKER_PREFIX = re.compile(r"^[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}:\s+")
_ABSOLUTE = re.compile(
    r"(?:the (?:week|weekend|" + "|".join(WEEKDAYS) + r") (?:before|after|of) )?\d{1,2} (?:" + "|".join(MONTHS)
    + r") \d{4}|\d+ (?:days|weeks|months) before \d{1,2} (?:" + "|".join(MONTHS) + r") \d{4}|"
    + DATE_PATTERN.pattern,
    re.IGNORECASE,
)
_PLACE = re.compile(
    r"\b(?:in|to|at|from|near|visited|visiting)\s+(?:the\s+)?((?:[A-Z][\w'-]+)(?:\s+(?:on\s+|of\s+)?[A-Z][\w'-]+)*)"
)
_NAMED = re.compile(r"\b(?:named|called|name is)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)")
_NUMBER = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)\b(\s+[a-z]+)?", re.I)
_DURATION = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(years?|months?|weeks?|days?)\b", re.I
)
_DATE_WORDS = frozenset(w.lower() for w in MONTHS + WEEKDAYS) | {"week", "weekend", "before", "after", "ago"}


_BY = re.compile(r"\bby\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)*)")
_NAME_RUN = re.compile(r"\b[A-Z][a-z]+(?:'s)?(?:\s+[A-Z][a-z]+(?:'s)?)*")


def _proper_names(q: Question, text: str) -> list[str]:
    """Runs of capitalised words in ``text`` that are not names the question already uses."""
    out = []
    for run in _NAME_RUN.findall(text):
        kept = [w.removesuffix("'s") for w in run.split()
                if w.removesuffix("'s") not in q.names and w.lower().removesuffix("'s") not in _NOT_NAMES]
        if kept:
            out.append(" ".join(kept))
    return out


def _when(item: Item, text: str, active: frozenset[str]) -> str | None:
    m = _ABSOLUTE.search(text)
    if m:
        return m.group(0)
    relative = find_relative_dates(text)
    if relative:
        if "resolve_dates" in active and item.date is not None:
            resolved = resolve_relative_dates(relative[0], item.date)
            found = _ABSOLUTE.search(resolved)
            return found.group(0) if found else resolved
        return relative[0]
    return format_date(item.date) if item.date is not None else None


_LIGHT = frozenset(
    "signed started start began been got went also learning learned taking took doing finally since every "
    "weekends recently new now really".split()
)


def _residual_words(q: Question, text: str) -> list[str]:
    name_words = {n.lower() for n in q.names}
    related = _related(q.topic)
    kept = []
    for token in re.findall(r"[A-Za-z0-9][\w'-]*", text):
        key = words(token)
        w = key[0] if key else ""
        if w and w not in STOPWORDS and w not in name_words and w not in _DATE_WORDS and w not in _LIGHT \
                and not w.isdigit() and stem(w) not in q.topic and stem(w) not in related:
            kept.append(token)
    return kept


def _residual(q: Question, text: str) -> str:
    """The words of the best-fitting clause that the question does not already contain."""
    name_stems = {stem(n.lower()) for n in q.names}
    best: tuple[tuple[int, int], list[str]] | None = None
    for clause in clauses(text) or [text]:
        kept = _residual_words(q, clause)
        found = q.topic & {stem(w) for w in content_words(clause)}
        fit = (len(found - name_stems), len(found))
        if kept and (best is None or fit > best[0]):
            best = (fit, kept)
    return " ".join(best[1][:8]) if best else text


def _span(q: Question, item: Item, active: frozenset[str]) -> str:
    text = _SPEAKER_PREFIX.sub("", item.text)
    found: str | None = None
    if q.kind == "when":
        found = _when(item, text, active)
    elif q.kind == "where":
        places = [p for p in _PLACE.findall(text) if p.split()[0] not in q.names and p.split()[0] not in MONTHS]
        found = places[-1] if places else None
    elif q.kind == "who":
        m = _BY.search(text)
        people = _proper_names(q, text)
        found = m.group(1) if m else (", ".join(dict.fromkeys(people)) if people else None)
    elif q.kind == "name":
        m = _NAMED.search(text)
        people = _proper_names(q, text)
        found = m.group(1) if m else (people[-1] if people else None)
    elif q.kind == "count":
        m = _NUMBER.search(text)
        found = m.group(0).strip() if m else None
    elif q.kind == "duration":
        m = _DURATION.search(text)
        found = m.group(0) if m else None
    return found if found else _residual(q, text)


def _elapsed(q: Question, item: Item, today: dt.date | None) -> str | None:
    """Days (weeks, months) from the item's date to ``today``; None when either is unknown."""
    text = _SPEAKER_PREFIX.sub("", item.text)
    when = None
    found = find_dates(text)
    absolute = [d for d in found if d.day is not None and d.month is not None and d.year is not None]
    if absolute:
        when = dt.date(absolute[0].year, absolute[0].month, absolute[0].day)
    elif item.date is not None:
        relative = find_relative_dates(text)
        resolved = resolve_relative_dates(relative[0], item.date) if relative else None
        dates = find_dates(resolved) if resolved else []
        exact = [d for d in dates if d.day is not None and d.month is not None and d.year is not None]
        when = dt.date(exact[0].year, exact[0].month, exact[0].day) if exact else item.date
    if when is None or today is None:
        return None
    days = (today - when).days
    low = q.text.lower()
    if "week" in low:
        return f"{round(days / 7)} weeks"
    if "month" in low:
        return f"{round(days / 30.4)} months"
    return f"{days} days"


def answer(question: str, context: str, active: frozenset[str]) -> str:
    """Answer ``question`` from ``context`` under the active answer directives."""
    lines = context.splitlines()
    today = None
    if lines and (m := _CURRENT_DATE.match(lines[0])):
        today, context = parse_session_date(m.group("date")), "\n".join(lines[1:])
    items = context_items(context)
    if not items:
        return NOT_MENTIONED
    q = analyze(question)
    ranked = sorted(
        ((_name_hits(q, it), _score(q, it), -n, it) for n, it in enumerate(items)),
        key=lambda t: t[:3],
        reverse=True,
    )
    _, best_score, _, best = ranked[0]
    if "abstain" in active and (best_score == 0 or not _supported(q, best, literal=True)):
        return NOT_MENTIONED
    chosen = [best]
    if "combine_all" in active:
        floor = max(1.0, COMBINE_SHARE * best_score)
        chosen += [it for _, s, _, it in ranked[1:] if s >= floor and _supported(q, it)]
    if q.kind == "elapsed":
        counted = _elapsed(q, best, today)
        return counted if counted is not None else (_when(best, _SPEAKER_PREFIX.sub("", best.text), active) or
                                                     _residual(q, best.text))
    spans = list(dict.fromkeys(_span(q, it, active) for it in chosen))
    return ", ".join(spans)


_RELATED = {
    "pet": "dog cat puppy kitten adopted", "pets": "dog cat puppy kitten adopted",
    "dog": "puppy pet", "cat": "kitten pet", "job": "work works company position role career hired",
    "work": "job company position career", "career": "job work position",
    "live": "lives moved settled home city apartment", "home": "house apartment moved",
    "city": "moved lives settled town", "hobby": "enjoys class classes learning practice club",
    "hobbies": "enjoys class classes learning practice club", "trip": "travel traveled visited vacation flew",
    "travel": "trip visited vacation", "vacation": "trip travel visited", "sport": "play plays team game",
    "family": "sister brother mother father parents kids children", "partner": "husband wife married",
    "kids": "children son daughter", "study": "studies class course school degree", "book": "read reading novel",
    "music": "band song guitar piano", "instrument": "guitar piano violin drums", "food": "cook cooking recipe",
    "school": "class study degree college university", "car": "drive drives bought",
    "picked": "started learning signed",
}
_RELATED_BY_STEM: dict[str, tuple[str, ...]] = {}
for _word, _terms in _RELATED.items():
    _RELATED_BY_STEM.setdefault(stem(_word), ())
    _RELATED_BY_STEM[stem(_word)] += tuple(_terms.split())


def query_terms(question: str) -> list[str]:
    """Names and key nouns of a question plus their related terms (SimLM's small thesaurus)."""
    q = analyze(question)
    terms = list(q.names)
    for w in content_words(question):
        if w in _QUESTION_WORDS or w.capitalize() in q.names:
            continue
        terms.append(w)
        terms.extend(_RELATED.get(w, "").split())
    return list(dict.fromkeys(terms))
