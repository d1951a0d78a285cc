"""What a careful reader does before deciding whether a variable holds the information.

`reading` turns a variable's value into lines a judge can read, each date read against the date *that item*
was written (`item_day`): a MemBase message's own ``Timestamp:`` line, a line's own date stamp
(``[6 February, 2023] Marco: ...``, ``2023-04-08: User ...``), a section header (``=== Session 3 (12 March,
2023) ===``), the value's ``timestamp`` or ``date`` field, the node's ``metadata.timestamp``, else the unit's
session date. With that day:

- relative dates are resolved: "last Friday" said on Monday 8 May 2023 reads "on 5 May 2023", "last weekend"
  "the weekend before 8 May 2023", "on Friday the 12th" said on 15 May 2023 "on 12 May 2023" (with a weekday,
  the nearest such day either way; without one, the last Nth, or the next when the line plans ahead: "let's book
  it for the 27th");
- an ISO date-time reads as a date and a clock time ("2024-11-15T09:30:00-06:00" → "15 November 2024 9:30");
- a date without a year gets the year that puts it nearest the item's day: "hiked Snowdon on 12 May" written
  on 15 May 2023 reads "12 May 2023", "moving on 1 April" written on 12 March 2023 "1 April 2023" (Mem0's facts
  usually omit the year; LoCoMo's golds carry it).

Numbers written as words become digits ("three kittens" → "3 kittens", "sixty eight" → "68", a spoken year,
clock time or day: "nineteen fifty seven" → "1957", "at five forty five" → "at 5:45", "July ninth" → "July 9")
on both sides, so a gold "3" meets "three" and a speech transcript meets the facts written from it.
Case and punctuation are left to the judge (SimLM compares word stems).

A message's own date is used to read what it says, not read as something it states: a line "Timestamp:
18 March 2023" under an unrelated remark does not make that remark hold "18 March 2023"; a stamp that only dates
its line stays (it is what a context shows the answer step).

Limits: only the relative forms of `memopt.core.text.find_relative_dates` and "the Nth" are resolved; vaguer
ones ("recently", "a while back") stay unresolved and do not match a date, which is the point (they lost the
date). A line with no date of its own and no dated item around it is read as written. Numbers of a hundred and
more in words are not converted.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from functools import lru_cache
from typing import Any

from memopt.core.text import (
    WEEKDAYS,
    DateMention,
    find_dates,
    find_relative_dates,
    format_date,
    resolve_relative_dates,
)
from memopt.trace.dates import read_day
from memopt.trace.tombstones import is_tombstone

__all__ = ["canonical_dates", "complete_years", "item_day", "normalise_numbers", "plain", "reading"]

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen twenty").split()
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_UNITS[1:]) + r")\b", re.IGNORECASE)
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_TWO = rf"(?:(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(_UNITS[1:10])}))?|{'|'.join(_UNITS[10:20])})"
_ORDINAL_DAYS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
                 "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_ORDINAL_DAYS += [f"twenty {o}" for o in _ORDINAL_DAYS[:9]] + ["thirtieth", "thirty first"]
_MONTH_NAMES = ("january february march april may june july august september october november "
                "december").split()
_SPOKEN = re.compile(
    rf"\b(?:(?P<century>nineteen|twenty)\s+(?P<decade>{_TWO}|o\s+(?:{'|'.join(_UNITS[1:10])}))"
    rf"|(?P<at>at\s+)(?P<hour>{'|'.join(_UNITS[1:13])})\s+(?P<minute>{_TWO})"
    rf"|(?P<month>{'|'.join(_MONTH_NAMES)})\s+(?:the\s+)?(?P<nth>"
    rf"{'|'.join(o.replace(' ', '[ -]') for o in sorted(_ORDINAL_DAYS, key=len, reverse=True))})"
    rf"|(?P<ordtens>{'|'.join(_TENS)})[\s-]+(?P<ordunit>{'|'.join(_ORDINAL_DAYS[:9])})"
    rf"|(?P<compound>(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(_UNITS[1:10])}))?)"
    rf"(?![\s-]+(?:{'|'.join(_ORDINAL_DAYS[:9])})\b))\b", re.IGNORECASE)
_STAMP_LINE = re.compile(r"^\s*(?:Timestamp|Date|Time)\s*:\s*(?P<stamp>.+)$", re.IGNORECASE)
_HEADER = re.compile(r"^\s*[=#*\-\[]{0,4}\s*(?:session|day|conversation|chat)?\s*\w{0,6}\s*\(?"
                     r"(?P<stamp>[^()\]]{6,60}?)\)?\s*[=#*\-\]]{2,}\s*$", re.IGNORECASE)
_PREFIX = re.compile(r"^\s*(?:[-*•]\s*)?(?:\[(?P<bracket>[^\]]{6,60})\]"
                     r"|(?P<iso>\d{4}-\d{2}-\d{2})(?:[ T][\d:.]+)?\s*:)")
_LAST_WEEKDAY = re.compile(r"\b(?:last|this past) (" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)
_THE_NTH = re.compile(r"\b(?:on\s+)?(?:(?P<wd>" + "|".join(WEEKDAYS) + r"),?\s+)?the\s+(?P<n>3[01]|[12]\d|0?[1-9])"
                      r"(?:st|nd|rd|th)\b(?!\s+of\b)", re.IGNORECASE)


def _value(words: str) -> int:
    """The number one to ninety-nine written in words (``sixty eight``, ``forty-five``, ``twelve``)."""
    total = 0
    for w in re.split(r"[\s-]+", words.lower()):
        if w == "o":  # "nineteen o five"
            continue
        total += _TENS.index(w) * 10 + 20 if w in _TENS else _UNITS.index(w)
    return total


def _spoken(m: re.Match[str]) -> str:
    """A spoken year, clock time or day of a month as digits (see `normalise_numbers`)."""
    if m.group("century"):
        return f"{_value(m.group('century'))}{_value(m.group('decade')):02d}"
    if m.group("hour"):
        return f"{m.group('at')}{_value(m.group('hour'))}:{_value(m.group('minute')):02d}"
    if m.group("ordtens"):  # "twenty-first" → "21st", not "20-first"
        n = _value(m.group("ordtens")) + _ORDINAL_DAYS.index(m.group("ordunit").lower()) + 1
        return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"
    if m.group("month"):
        return f"{m.group('month')} {_ORDINAL_DAYS.index(m.group('nth').lower().replace('-', ' ')) + 1}"
    return str(_value(m.group("compound")))


_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])")
_THOUSANDS = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)\s?(?:k|thousand)\b", re.IGNORECASE)


def _thousands(m: re.Match[str]) -> str:
    value = float(m.group(1)) * 1000
    return str(int(value)) if value == int(value) else m.group(0)


_CODES = {"€": "EUR", "£": "GBP", "¥": "JPY", "eur": "EUR", "euro": "EUR", "euros": "EUR", "gbp": "GBP",
          "chf": "CHF", "jpy": "JPY"}
_SIGN_FIRST = re.compile(r"([€£¥])\s?(\d[\d.,]*)")
_CODE_AFTER = re.compile(r"(?<![\w.,])(\d[\d.,]*\d|\d)\s?(eur|euros?|gbp|chf|jpy)\b", re.IGNORECASE)


def _amounts(text: str) -> str:
    """An amount of a currency written one way, its code first ("€180", "180 euros", "180 EUR" → "EUR 180"; "£50"
    → "GBP 50")."""
    text = _SIGN_FIRST.sub(lambda m: f"{_CODES[m.group(1)]} {m.group(2)}", text)
    return _CODE_AFTER.sub(lambda m: f"{_CODES[m.group(2).lower()]} {m.group(1)}", text)


_CADENCE = re.compile(r"\b(?:each|every|per|a|once a|once per)\s+(day|week|month|year)\b", re.IGNORECASE)
_CADENCE_WORD = {"day": "daily", "week": "weekly", "month": "monthly", "year": "yearly"}
_ORDINAL_NUMBER = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b", re.IGNORECASE)


def _cadence(text: str) -> str:
    """How often, written one way ("each month", "every month", "per month", "a month" → "monthly"), and in a text
    that says how often, an ordinal day as its number ("the 5th of each month" → "the 5 of monthly"), as a row
    keeps them (``cadence: monthly``, ``billing_day: 5``)."""
    text = _CADENCE.sub(lambda m: _CADENCE_WORD[m.group(1).lower()], text)
    if not re.search(r"\b(?:daily|weekly|monthly|yearly)\b", text, re.IGNORECASE):
        return text
    return _ORDINAL_NUMBER.sub(r"\1", text)


_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?([ap])\.?m\.?(?!\w)", re.IGNORECASE)
_CLOCK_24 = re.compile(r"(?<![\d:.])(\d{1,2}):(\d{2})(?![\d:])")
_CLOCK_RANGE = re.compile(r"\b(\d{1,2}:\d{2}\s*(?:to|-|–|until|till)\s*)(\d{1,2})(?![\d:])")


def _clock(m: re.Match[str]) -> str:
    """A clock time with am / pm as the time on the clock face ("4pm", "4 PM", "4:00 p.m." → "4:00")."""
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    return m.group(0) if hour > 12 or minute > 59 else f"{hour}:{minute:02d}"


def _clock_face(m: re.Match[str]) -> str:
    """A 24-hour time as the time on the clock face ("16:00" → "4:00", "0:30" → "12:30")."""
    hour, minute = int(m.group(1)), int(m.group(2))
    if hour > 23 or minute > 59:
        return m.group(0)
    return f"{(hour - 1) % 12 + 1}:{m.group(2)}"


def normalise_numbers(text: str) -> str:
    """Number words as digits, as a speech transcript writes them: "three" → "3", "sixty eight" → "68", a year
    "nineteen fifty seven" → "1957", a clock time "at five forty five" → "at 5:45", a day "July ninth" → "July 9";
    thousands written one way ("$62,000", "62k" and "sixty two thousand" all "62000"), and amounts too ("180
    euros", "€180" → "EUR 180"), a clock time as the clock face shows it, am or pm
    aside ("4pm", "4 PM" and "16:00" → "4:00"; "9:30 to 4" → "9:30 to 4:00"), and how often (`_cadence`)."""
    text = _NUMBER_WORD.sub(lambda m: str(_UNITS.index(m.group(1).lower())), _SPOKEN.sub(_spoken, text))
    text = _CLOCK_RANGE.sub(r"\1\2:00", _CLOCK_24.sub(_clock_face, _CLOCK.sub(_clock, text)))
    return _cadence(_amounts(_THOUSANDS.sub(_thousands, _GROUPED.sub(lambda m: m.group(0).replace(",", ""), text))))


@lru_cache(maxsize=65536)
def _dates(text: str) -> tuple[DateMention, ...]:
    """`memopt.core.text.find_dates`, remembered (the same lines are read again and again)."""
    return tuple(find_dates(text))


@lru_cache(maxsize=65536)
def canonical_dates(text: str) -> str:
    """Each date with a day and a month written one way, "3 June" or "3 June 2023" ("June 3rd", "2023-06-03",
    "3rd of June" alike), so words compare as well as dates."""
    from memopt.core.text import MONTHS

    for m in _dates(text):
        if m.day is not None and m.month is not None:
            text = text.replace(m.text, f"{m.day} {MONTHS[m.month - 1]}" + (f" {m.year}" if m.year else ""), 1)
    return text


def item_day(value: Any, metadata: dict[str, Any] | None = None, fallback: str | None = None) -> dt.date | None:
    """The day an item was written: its value's ``timestamp`` (or ``date``), its metadata's, else ``fallback``
    (a session date)."""
    own = [value.get("timestamp"), value.get("date")] if isinstance(value, dict) else []
    for stamp in (*own, (metadata or {}).get("timestamp"), fallback):
        if isinstance(stamp, str) and (day := read_day(stamp)) is not None:
            return day
    return None


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [line for v in value.values() for line in _leaves(v)]
    if isinstance(value, list):
        return [line for v in value for line in _leaves(v)]
    return str(value).splitlines() if value is not None else []


_SUBJECT = ("subject", "subj", "head", "source", "src", "entity", "from", "s", "h")
_RELATION = ("predicate", "pred", "relation", "relationship", "rel", "attribute", "p", "r", "type")
_PROPS = ("props", "properties", "attributes", "attrs")  # a property graph's relation: its properties
_OBJECT = ("object", "obj", "tail", "target", "dst", "value", "to", "o", "t")


def _triple(value: dict[str, Any]) -> tuple[str, str, str] | tuple[()]:
    """The keys of a knowledge-graph triple in a record (subject / predicate / object, head / relation / tail,
    source / relation / target, ...), read as one line "Sam recommends restaurant in Krakow"; () for other
    records."""
    keys = {str(k).lower(): k for k, v in value.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    found = [next((keys[k] for k in names if k in keys), None) for names in (_SUBJECT, _RELATION, _OBJECT)]
    return tuple(found) if all(k is not None for k in found) else ()  # type: ignore[return-value]


def plain(value: Any) -> str:
    """A value's text leaves, one per line (no JSON escapes), for verbatim comparison."""
    return "\n".join(_leaves(value))


def _nearest(day: int, month: int, near: dt.date) -> dt.date | None:
    found = []
    for year in (near.year - 1, near.year, near.year + 1):
        try:
            found.append(dt.date(year, month, day))
        except ValueError:
            continue
    return min(found, key=lambda d: abs((d - near).days)) if found else None


def complete_years(line: str, day: dt.date) -> str:
    """``line`` with each date that has a day and month but no year given the year nearest ``day``."""
    mentions = [m for m in _dates(line) if m.year is None and m.day is not None and m.month is not None]
    for m in mentions:
        full = _nearest(m.day, m.month, day)
        if full is not None:
            line = line.replace(m.text, format_date(full), 1)
    return line


_AHEAD = re.compile(r"\b(?:will|shall|let's|let us|going to|gonna|next|upcoming|coming|book|schedule|reserve|"
                    r"plan|planned|planning|starting|beginning)\b|'ll\b", re.IGNORECASE)


_PRESENT = re.compile(r"\b(?:is|are)\b", re.IGNORECASE)  # "the review on the 27th is still on"
_PAST = re.compile(r"\b(?:was|were|did|had|ago|last|yesterday)\b", re.IGNORECASE)


def _the_nth(m: re.Match, day: dt.date, ahead: bool = False) -> str:
    """"the Nth" (or "Friday the Nth") said on ``day``: with a weekday, the nearest Nth on that weekday, before or
    after; without one, the latest Nth up to ``day``, or the next one from ``day`` when the line plans ahead
    (``ahead``: "let's book it for the 27th", or a line in the present tense with no word of the past: "the
    review on the 27th is still on")."""
    n, weekday = int(m.group("n")), m.group("wd")
    months = [day.replace(day=1)]
    for _ in range(6):
        months = [(months[0] - dt.timedelta(days=1)).replace(day=1), *months,
                  (months[-1] + dt.timedelta(days=32)).replace(day=1)]
    found = []
    for month in months:
        try:
            found.append(month.replace(day=n))
        except ValueError:
            continue
    if weekday is not None:
        found = [d for d in found if WEEKDAYS[d.weekday()].lower() == weekday.lower()]
    else:
        found = [d for d in found if d >= day] if ahead else [d for d in found if d <= day]
    if not found:
        return m.group(0)
    return f"on {format_date(min(found, key=lambda d: (abs((d - day).days), d < day)))}"


_ISO_DATETIME = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?"
                           r"(?:Z|[+-]\d{2}:?\d{2})?\b")


def _datetime(m: re.Match) -> str:
    """An ISO date-time (``2025-09-13T10:00:00+01:00``) as a date and a clock time ("13 September 2025 10:00"), as
    a person says them; kept as it is when it is no date."""
    try:
        day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return m.group(0)
    return f"{format_date(day)} {int(m.group(4))}:{m.group(5)}"


_WEEKDAY_AROUND = re.compile(r"\bthe (" + "|".join(WEEKDAYS) + r") (after|before) (\d{1,2} [A-Z][a-z]+ \d{4})\b")


def _weekday_around(m: re.Match) -> str:
    """"the Tuesday after 7 November 2024" (what "next Tuesday" said that Thursday resolves to) as the day it is,
    the first such weekday after (or before) that date: "on 12 November 2024"."""
    found = _dates(m.group(3))
    if not found or found[0].day is None or found[0].month is None or found[0].year is None:
        return m.group(0)
    start = dt.date(found[0].year, found[0].month, found[0].day)
    step = 1 if m.group(2) == "after" else -1
    gap = ((WEEKDAYS.index(m.group(1)) - start.weekday()) * step) % 7 or 7
    return f"on {format_date(start + dt.timedelta(days=gap * step))}"


def _resolve(line: str, day: dt.date | None, near: dt.date | None = None) -> str:
    line = _ISO_DATETIME.sub(_datetime, line)
    if day is None:
        return complete_years(line, near) if near is not None else line
    if find_relative_dates(line) or _LAST_WEEKDAY.search(line):
        def exact(m: re.Match) -> str:
            back = (day.weekday() - WEEKDAYS.index(m.group(1).capitalize())) % 7 or 7
            return f"on {format_date(day - dt.timedelta(days=back))}"

        line = _WEEKDAY_AROUND.sub(_weekday_around, resolve_relative_dates(_LAST_WEEKDAY.sub(exact, line), day))
    ahead = bool(_AHEAD.search(line)) or bool(_PRESENT.search(line) and not _PAST.search(line))
    line = _THE_NTH.sub(lambda m: _the_nth(m, day, ahead), line)
    return complete_years(line, day)


def _own_stamp(line: str) -> dt.date | None:
    """The date a line's own prefix stamp gives (``[date] ...``, ``2023-04-08: ...``), or None."""
    m = _PREFIX.match(line)
    if m is None:
        return None
    return read_day(m.group("bracket") or m.group("iso") or "")


def _header_day(line: str) -> dt.date | None:
    """The date a section header gives (``=== Session 3 (11:00 am on 12 March, 2023) ===``), or None."""
    m = _HEADER.match(line)
    return read_day(m.group("stamp")) if m else None


def _row(record: dict[str, Any]) -> bool:
    """Whether a record is one fact told in fields (a table row, a FHIR resource, a CRM field set: several leaves,
    each a value of a few words), read as one line, not a record holding texts (a memory's sentence) nor one holding
    a collection of records (a scratchpad's items)."""
    leaves = [leaf for leaf in _leaves(record) if leaf.strip()]
    return len(leaves) >= 2 and all(len(leaf.split()) <= _FIELD_WORDS for leaf in leaves) and not any(
        _records(v) for v in record.values())


def _row_words(record: dict[str, Any]) -> list[str]:
    """A row's leaves in order, each list of plain items after its key's words (``"allergies": ["peanuts"]`` reads
    "allergies peanuts": the key says what the items are, as a profile's layer keeps a list under a named field)."""
    words: list[str] = []
    for key, value in record.items():
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            words.append(str(key).replace("_", " "))
        words.extend(_leaves(value))
    return words


def _records(value: Any) -> bool:
    """Whether a field holds a collection of records (items with an id of their own, or marked deleted): a store
    of several facts, read item by item, not one fact."""
    if isinstance(value, dict):
        return any(_records(v) for v in value.values())
    return isinstance(value, list) and any(
        isinstance(item, dict) and (_soft_deleted(item) or any(str(k).lower() in ("id", "uuid", "key", "memory_id")
                                                                for k in item)) for item in value)


_FIELD_WORDS = 5


def _soft_deleted(item: Any) -> bool:
    """Whether an item of a list is marked deleted in place (a scratchpad's ``"deleted": true``, a row's
    ``deleted_at``): a careful reader leaves it out."""
    return isinstance(item, dict) and is_tombstone(item)


def _embedded_json(text: str) -> tuple[str, Any] | None:
    """A prompt that pastes a JSON dump among its lines (``SCRATCHPAD ...:\n{ ... }\nQUESTION: ...``): its other
    text and the dump, decoded; None for any other text."""
    start = re.search(r"^[ \t]*[\[{]", text, re.MULTILINE)
    if start is None:
        return None
    at = text.index(text[start.start():].lstrip()[0], start.start())
    try:
        decoded, end = json.JSONDecoder().raw_decode(text, at)
    except ValueError:
        return None
    if not isinstance(decoded, (dict, list)):
        return None
    return "\n".join(x for x in (text[:at].strip(), text[end:].strip()) if x), decoded


def reading(value: Any, day: dt.date | None = None, near: dt.date | None = None) -> str:
    """A value as lines a careful reader reads: text leaves of structured values, dates read against each item's
    own date (a ``Timestamp:`` line dates the lines before it and is then dropped; a section header dates the
    lines after it; a line's own stamp dates that line), numbers as digits; ``id``, ``score`` and ``timestamp``
    fields are left out; a knowledge-graph triple (subject / predicate / object, head / relation / tail, ...) is one
    line. ``near`` (the day the item was stored, when it has no date of its own) only completes
    years: relative dates are not resolved against it."""
    if isinstance(value, dict) and day is None:
        day = item_day(value)
    if isinstance(value, str) and (dump := _embedded_json(value)) is not None:
        return "\n".join(x for x in (reading(dump[0], day, near), reading(dump[1], day, near)) if x)
    if isinstance(value, list):
        return "\n".join(reading(v, item_day(v) or day, near) for v in value if not _soft_deleted(v))
    if isinstance(value, dict):
        triple, words = _triple(value), []
        if triple:
            words = [str(value[k]) for k in triple]
        else:  # {"relation": ["Mia", "TAKES", "Piano lessons"], "props": {...}}
            listed = next((k for k, v in value.items() if str(k).lower() in _RELATION and isinstance(v, list)
                           and len(v) == 3 and all(isinstance(x, (str, int, float)) for x in v)), None)
            triple, words = ((listed,), [str(x) for x in value[listed]]) if listed is not None else ((), [])
        props = next((k for k in value if str(k).lower() in _PROPS and isinstance(value[k], dict)), None)
        if triple and props is not None:  # a relation's properties belong to its line
            triple, words = (*triple, props), [*words, *_leaves(value[props])]
        rest = {k: v for k, v in value.items() if k not in ("id", "score", "timestamp") and k not in triple}
        lines = [reading(" ".join(w.replace("_", " ") for w in words), day, near)] if triple else []
        if not triple and _row(rest):  # a record of short fields (a table row, a FHIR resource) is one fact
            return reading(" ".join(_row_words(rest)), day, near)
        return "\n".join([*lines, *(reading(v, day, near) for v in rest.values())])
    out: list[str] = []
    pending: list[str] = []
    section = day
    for line in _leaves(value):
        stamp = _STAMP_LINE.match(line)
        if stamp and (when := read_day(stamp.group("stamp"))) is not None:
            out += [_resolve(p, when) for p in pending]
            pending = []
            continue
        if (header := _header_day(line)) is not None:
            out += [_resolve(p, section, near) for p in pending]
            pending, section = [], header
            out.append(line)
            continue
        own = _own_stamp(line)
        if own is not None:
            out += [_resolve(p, section, near) for p in pending]
            pending = []
            out.append(_resolve(line, own))
            continue
        pending.append(line)
    out += [_resolve(p, section, near) for p in pending]
    return normalise_numbers("\n".join(out))
