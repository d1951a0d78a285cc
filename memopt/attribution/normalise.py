"""What a careful reader does before deciding whether a variable holds the information.

`reading` turns a variable's value into lines a judge can read, each relative date resolved against
the date *that item* was written (`item_day`): a MemBase message's own ``Timestamp:`` line, the
value's ``timestamp`` field, the node's ``metadata.timestamp``, else the unit's session date; so
"last Friday" said on Monday 8 May 2023 reads "on 5 May 2023", "last weekend" "the weekend before 8 May 2023".
Numbers written as words become digits ("three kittens" → "3 kittens") on both sides, so a gold "3"
meets "three". Case and punctuation are left to the judge (SimLM compares word stems).

A message's own date is used to resolve what it says, not read as something it states: a line "Timestamp:
18 March 2023" under an unrelated remark does not make that remark hold "18 March 2023".

Limits: only the relative forms of `memopt.core.text.find_relative_dates` are resolved ("last Friday", "two
days ago", "last week", ...); vaguer ones ("recently", "a while back") stay unresolved and do not
match a date, which is the point (they lost the date). A line without any date of its own and no
dated item around it is read as written. Numbers above twenty in words are not converted.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from memopt.core.text import WEEKDAYS, find_relative_dates, format_date, parse_session_date, resolve_relative_dates

__all__ = ["item_day", "normalise_numbers", "plain", "reading"]

_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
          "seventeen eighteen nineteen twenty").split()
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_UNITS[1:]) + r")\b", re.IGNORECASE)
_STAMP_LINE = re.compile(r"^\s*(?:Timestamp|Date|Time)\s*:\s*(?P<stamp>.+)$", re.IGNORECASE)
_LAST_WEEKDAY = re.compile(r"\b(?:last|this past) (" + "|".join(WEEKDAYS) + r")\b", re.IGNORECASE)


def normalise_numbers(text: str) -> str:
    """Number words up to twenty as digits ("three" → "3")."""
    return _NUMBER_WORD.sub(lambda m: str(_UNITS.index(m.group(1).lower())), text)


def item_day(value: Any, metadata: dict[str, Any] | None = None, fallback: str | None = None) -> dt.date | None:
    """The day an item was written: its value's ``timestamp``, its metadata's, else ``fallback`` (a session date)."""
    for stamp in ((value.get("timestamp") if isinstance(value, dict) else None),
                  (metadata or {}).get("timestamp"), fallback):
        if isinstance(stamp, str) and (day := parse_session_date(stamp)) is not None:
            return day
    return None


def _leaves(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [line for v in value.values() for line in _leaves(v)]
    if isinstance(value, list):
        return [line for v in value for line in _leaves(v)]
    return str(value).splitlines() if value is not None else []


def plain(value: Any) -> str:
    """A value's text leaves, one per line (no JSON escapes), for verbatim comparison."""
    return "\n".join(_leaves(value))


def _resolve(line: str, day: dt.date) -> str:
    if not find_relative_dates(line):
        return line

    def exact(m: re.Match) -> str:
        back = (day.weekday() - WEEKDAYS.index(m.group(1).capitalize())) % 7 or 7
        return f"on {format_date(day - dt.timedelta(days=back))}"

    return resolve_relative_dates(_LAST_WEEKDAY.sub(exact, line), day)


def reading(value: Any, day: dt.date | None = None) -> str:
    """A value as lines a careful reader reads: text leaves of structured values, relative dates resolved against
    each item's own date (a ``Timestamp:`` line dates the lines before it and is then dropped, as are ``id``,
    ``score`` and ``timestamp`` fields), numbers as digits."""
    if isinstance(value, dict) and day is None:
        day = item_day(value)
    if isinstance(value, list):
        return "\n".join(reading(v, item_day(v) or day) for v in value)
    if isinstance(value, dict):
        return "\n".join(reading(v, day) for k, v in value.items() if k not in ("id", "score", "timestamp"))
    lines = _leaves(value)
    out: list[str] = []
    pending: list[str] = []
    for line in lines:
        stamp = _STAMP_LINE.match(line)
        if stamp and (when := parse_session_date(stamp.group("stamp"))) is not None:
            out += [_resolve(p, when) for p in pending]
            pending = []
        else:
            pending.append(line)
    out += [_resolve(p, day) if day is not None else p for p in pending]
    return normalise_numbers("\n".join(out))
