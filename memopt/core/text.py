"""Plain-text NLP shared by the metrics, the synthetic generator and SimLM.

Everything here is deterministic and cheap: regex tokenisation, a fixed English stopword list,
Porter stemming (PyStemmer's ``porter`` algorithm), sentence splitting, LoCoMo session dates and
the resolution of relative date expressions ("yesterday", "last week") against a session date,
written the way LoCoMo's gold answers write them ("7 May 2023", "The week before 9 June 2023").

>>> resolve_relative_dates("I adopted a puppy yesterday.", parse_session_date("1:56 pm on 8 May, 2023"))
'I adopted a puppy on 7 May 2023.'
"""

from __future__ import annotations

import ast
import datetime as dt
import re
import threading
from collections.abc import Set
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import Stemmer

__all__ = [
    "answer_items",
    "STOPWORDS",
    "MONTHS",
    "WEEKDAYS",
    "words",
    "content_words",
    "stem",
    "stem_set",
    "stems",
    "overlap",
    "sentences",
    "clauses",
    "parse_session_date",
    "format_date",
    "find_relative_dates",
    "resolve_relative_dates",
    "has_absolute_date",
    "find_dates",
    "DateMention",
    "DATE_PATTERN",
    "python_literal",
]

STOPWORDS = frozenset(
    """a an the and or but if then so of to in on at by for with from into onto about as is am are was
    were be been being do does did done have has had having i me my mine myself we us our ours you your
    yours he him his she her hers it its they them their theirs this that these those there here what
    which who whom whose when where why how not no yes can could will would shall should might must
    just really very too also quite so such some any all each every both either neither more most much
    many lot lots up down out over under again still even than s t d ll m re ve oh ah hey hi wow yeah
    okay ok well like now get got gonna going go went thing things something anything everything one ones
    im ive id youre thats its whats dont didnt doesnt isnt wasnt cant wont""".split()
)

MONTHS = (
    "January February March April May June July August September October November December".split()
)
WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_MONTH_INDEX = {m.lower(): i + 1 for i, m in enumerate(MONTHS)}
_MONTH_INDEX.update({m[:3].lower(): i + 1 for i, m in enumerate(MONTHS)})

_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_STEMMER = Stemmer.Stemmer("porter")


def words(text: str) -> list[str]:
    """Lowercased word tokens; clitics dropped ("Alex's" -> "alex", "I'm" -> "i", "don't" -> "dont")."""
    out = []
    for w in _WORD.findall(text):
        head, _, tail = w.lower().partition("'")
        out.append(head + tail if tail == "t" else head)
    return out


def content_words(text: str) -> list[str]:
    """Word tokens without stopwords, in order."""
    return [w for w in words(text) if w not in STOPWORDS]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of one lowercased word."""
    return _STEMMER.stemWord(word)


@lru_cache(maxsize=65536)
def stem_set(text: str) -> frozenset[str]:
    """The stems of the content words of a text, frozen and remembered (the same turns are compared again and
    again: every extracted fact against its session's turns)."""
    return frozenset(stem(w) for w in content_words(text))


def answer_items(gold: str) -> list[str]:
    """The items of a gold answer: its parts between commas, semicolons and "and" that hold a content word."""
    return [part.strip(" .") for part in re.split(r",|;|\band\b", gold) if stem_set(part)]


def stems(text: str) -> set[str]:
    """The set of stems of the content words of a text."""
    return set(stem_set(text))


def overlap(a: str | Set[str], b: str | Set[str]) -> float:
    """Share of the content stems of ``a`` that also occur in ``b`` (0 when ``a`` has none)."""
    sa = stem_set(a) if isinstance(a, str) else a
    sb = stem_set(b) if isinstance(b, str) else b
    return len(sa & sb) / len(sa) if sa else 0.0


_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9\"'(\[])")


def sentences(text: str) -> list[str]:
    """Split a text into sentences on terminal punctuation followed by a capital."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


_CLAUSE_BREAK = re.compile(r",\s+|;\s+|\s+-\s+|\s+(?:and|but|because|so|which|who)\s+")


def clauses(sentence: str) -> list[str]:
    """Split a sentence into clauses at commas, semicolons and coordinating words."""
    return [c.strip() for c in _CLAUSE_BREAK.split(sentence) if c and c.strip()]


# --- dates ---------------------------------------------------------------------------------

_SESSION_DATE = re.compile(
    r"(?:(?P<time>\d{1,2}:\d{2}\s*[ap]\.?m\.?)\s+on\s+)?(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+),?\s+(?P<year>\d{4})"
)


_ISO_DATE = re.compile(r"\b(?P<year>\d{4})([-/])(?P<month>\d{2})\2(?P<day>\d{2})(?!\d)")


def parse_session_date(text: str) -> dt.date | None:
    """Parse a session date: LoCoMo's ("1:56 pm on 8 May, 2023", "8 May 2023"), ISO ("2023-05-08", also with a
    time, "2023-05-08T18:00") or LongMemEval's ("2023/05/08 (Mon) 18:00"); else None."""
    m = _SESSION_DATE.search(text or "")
    month = _MONTH_INDEX.get(m.group("month").lower()) if m else None
    if m is None or month is None:
        m = _ISO_DATE.search(text or "")
        if m is None:
            return None
        month = int(m.group("month"))
    try:
        return dt.date(int(m.group("year")), month, int(m.group("day")))
    except ValueError:
        return None


def format_date(day: dt.date) -> str:
    """LoCoMo's way of writing a date: "7 May 2023"."""
    return f"{day.day} {MONTHS[day.month - 1]} {day.year}"


def _month_shift(day: dt.date, months: int) -> tuple[int, int]:
    index = day.year * 12 + (day.month - 1) + months
    return index // 12, index % 12 + 1


_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "a few": 3, "few": 3,
}
_NUM = r"(?P<n>\d+|a couple of|a few|an|a|one|two|three|four|five|six|seven|eight|nine|ten)"
_WEEKDAY = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"

_RELATIVE = re.compile(
    r"(?:\b(?:on|in|at|during)\s+)?\b(?:"
    r"(?P<yesterday>yesterday|last night)"
    r"|(?P<today>today|this morning|this afternoon|this evening|tonight|earlier today)"
    r"|(?P<tomorrow>tomorrow)"
    r"|(?P<lastweekend>last weekend|this past weekend|over the weekend)"
    r"|(?P<nextweekend>next weekend|this weekend|this coming weekend)"
    r"|(?P<lastweek>last week|this past week)"
    r"|(?P<thisweek>this week|earlier this week)"
    r"|(?P<nextweek>next week)"
    r"|(?P<lastwd>last|this past) " + _WEEKDAY.replace("wd", "lastwd_day") +
    r"|(?P<nextwd>next|this coming) " + _WEEKDAY.replace("wd", "nextwd_day") +
    r"|(?P<lastmonth>last month)"
    r"|(?P<thismonth>this month|earlier this month)"
    r"|(?P<nextmonth>next month)"
    r"|(?P<lastyear>last year)"
    r"|(?P<thisyear>this year|earlier this year)"
    r"|(?P<nextyear>next year)"
    r"|" + _NUM + r" (?P<unit>day|week|month|year)s? ago"
    r")\b",
    re.IGNORECASE,
)

_LEADING_PREP = re.compile(r"^(?:on|in|at|during)\s+", re.IGNORECASE)

# Month names in any case, but "May" and "March" only capitalised (lowercase they are a verb and a noun).
_MONTH_NAME = (r"(?:" + "|".join(m if m not in ("May", "March") else f"(?-i:{m})" for m in MONTHS)
               + r"|jan|feb|(?-i:Mar)|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?")
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"


def _named(template: str, n: int) -> str:
    return (template.replace("D", f"(?P<d{n}>{_DAY})").replace("M", f"(?P<m{n}>{_MONTH_NAME})")
            .replace("Y", f"(?P<y{n}>{_YEAR})"))


# Written forms of an absolute date, longest first: "19 January, 2023", "19th January 2023", "14September,
# 2022", "January 19, 2023", "October 13th, 2023", "19/01/2023" (day first, as LoCoMo writes dates;
# month first when the day cannot be a month), "2023-01-19", "May, 2023", "April.2023", "May 2023",
# "13 August", "Aug 15th", "2023".
_DATE_FORMS = (
    _named(r"D\s*M[,.]?\s*Y", 1),
    _named(r"M\s+D,?\s+Y", 2),
    r"(?P<a3>\d{1,2})[/.](?P<b3>\d{1,2})[/.](?P<y3>" + _YEAR + r"|\d{2})",
    r"(?P<y4>" + _YEAR + r")-(?P<m4>\d{1,2})-(?P<d4>\d{1,2})",
    _named(r"M[,.]?\s*Y", 5),
    _named(r"D\s*M", 6),
    _named(r"M\s+D", 7),
    _named(r"Y", 8),
)
DATE_PATTERN = re.compile(r"\b(?:" + "|".join(f"(?:{form})" for form in _DATE_FORMS) + r")\b", re.IGNORECASE)


@dataclass(frozen=True)
class DateMention:
    """An absolute date as a text states it: the parts it gives (day, month, year), the others None."""

    text: str
    day: int | None
    month: int | None
    year: int | None

    def matched_by(self, other: DateMention) -> bool:
        """Whether ``other`` states the same date: every part this mention gives, equal."""
        return all(mine is None or mine == theirs for mine, theirs in
                   ((self.day, other.day), (self.month, other.month), (self.year, other.year)))


def _month_number(name: str | None) -> int | None:
    return _MONTH_INDEX.get(name.rstrip(".").lower()[:3]) if name else None


def _day_number(text: str | None) -> int | None:
    return int(re.sub(r"\D", "", text)) if text else None


def _mention(m: re.Match) -> DateMention | None:
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if "a3" in g:
        first, second, year = int(g["a3"]), int(g["b3"]), int(g["y3"])
        day, month = (second, first) if first <= 12 < second else (first, second)
        year += 2000 if year < 100 else 0
    elif "y4" in g:
        day, month, year = int(g["d4"]), int(g["m4"]), int(g["y4"])
    else:
        n = next(k[1:] for k in g)
        day, month = _day_number(g.get(f"d{n}")), _month_number(g.get(f"m{n}"))
        year = int(g[f"y{n}"]) if f"y{n}" in g else None
    if month is not None and not 1 <= month <= 12 or day is not None and not 1 <= day <= 31:
        return None
    return DateMention(m.group(0), day, month, year)


def find_dates(text: str) -> list[DateMention]:
    """The absolute dates a text states, in order, each read whole (see ``DATE_PATTERN``'s forms)."""
    return [d for m in DATE_PATTERN.finditer(text) if (d := _mention(m)) is not None]


def find_relative_dates(text: str) -> list[str]:
    """The relative date expressions in a text, as written."""
    return [_LEADING_PREP.sub("", m.group(0)) for m in _RELATIVE.finditer(text)]


def has_absolute_date(text: str) -> bool:
    """Whether the text holds an absolute date ("7 May 2023", "May 2023", "2023")."""
    return bool(find_dates(text))


def _resolve(m: re.Match, day: dt.date) -> str:
    g = m.groupdict()
    if g["yesterday"]:
        return "on " + format_date(day - dt.timedelta(days=1))
    if g["today"]:
        return "on " + format_date(day)
    if g["tomorrow"]:
        return "on " + format_date(day + dt.timedelta(days=1))
    if g["lastweekend"]:
        return "the weekend before " + format_date(day)
    if g["nextweekend"]:
        return "the weekend after " + format_date(day)
    if g["lastweek"]:
        return "the week before " + format_date(day)
    if g["thisweek"]:
        return "the week of " + format_date(day)
    if g["nextweek"]:
        return "the week after " + format_date(day)
    if g["lastwd"]:
        return f"the {g['lastwd_day'].capitalize()} before {format_date(day)}"
    if g["nextwd"]:
        return f"the {g['nextwd_day'].capitalize()} after {format_date(day)}"
    for key, shift in (("lastmonth", -1), ("thismonth", 0), ("nextmonth", 1)):
        if g[key]:
            year, month = _month_shift(day, shift)
            return f"in {MONTHS[month - 1]} {year}"
    for key, shift in (("lastyear", -1), ("thisyear", 0), ("nextyear", 1)):
        if g[key]:
            return f"in {day.year + shift}"
    n_text = g["n"].lower()
    n = int(n_text) if n_text.isdigit() else _NUMBER_WORDS[n_text]
    unit = g["unit"].lower()
    if unit == "day":
        return "on " + format_date(day - dt.timedelta(days=n))
    if unit == "year":
        return f"in {day.year - n}"
    return f"{n} {unit}{'s' if n > 1 else ''} before {format_date(day)}"



def resolve_relative_dates(text: str, day: dt.date | None) -> str:
    """Rewrite relative date expressions as absolute ones, against the session date ``day``."""
    if day is None:
        return text
    return _RELATIVE.sub(lambda m: _resolve(m, day), text)


# CPython 3.11 (at least) keeps the AST builder's recursion depth in interpreter-wide state, so two threads
# parsing at once can raise "SystemError: AST constructor recursion depth mismatch" (seen in our CI; see
# python/cpython#106905). Our literal reads run in worker threads; they take turns.
_AST_LOCK = threading.Lock()


def python_literal(text: str) -> Any:
    """``ast.literal_eval`` of ``text``, one thread at a time; raises what ``literal_eval`` raises."""
    with _AST_LOCK:
        return ast.literal_eval(text)
