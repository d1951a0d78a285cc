"""The conversation day a trace gives: in a text ("1:56 pm on 8 May, 2023", "2023/05/08 (Mon) 18:00", "May 8,
2023", "Monday, 8 May 2023") or in a metadata dict, whatever the key.

A trace written by another system dates its sessions and messages its own way: ``session_date``,
``date_time``, ``when``, ``started``; LoCoMo's form, ISO, LongMemEval's, or the US "May 8, 2023". `read_day` reads
any of them (a full date: day, month and year); `date_of` finds the conversation date of a metadata dict: the usual
keys first, then any other key whose value reads as a full date (keys of a trace's own clock, ``*_at``, left out:
``created_at`` is when the trace was written, not when the conversation happened).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from memopt.core.text import find_dates, parse_session_date

__all__ = ["DATE_KEYS", "read_day", "date_of"]

DATE_KEYS = ("session_date", "session_date_time", "date_time", "date", "timestamp", "time", "run_date")
_CLOCK_KEYS = ("created_at", "updated_at", "modified_at", "trace_time")


def read_day(text: Any) -> dt.date | None:
    """The day a text gives as a full date (day, month and year) that is most of the text, or None."""
    if not isinstance(text, str) or not text.strip() or len(text) > 80:
        return None
    day = parse_session_date(text)
    if day is not None:
        return day
    for m in find_dates(text):
        if m.day is not None and m.month is not None and m.year is not None and 2 * len(m.text) >= len(text.strip()):
            try:
                return dt.date(m.year, m.month, m.day)
            except ValueError:
                continue
    return None


def _as_stamp(raw: str) -> str:
    """A date text in a form `memopt.core.text.parse_session_date` reads (itself when it already is)."""
    if parse_session_date(raw) is not None:
        return raw
    day = read_day(raw)
    return day.isoformat() if day is not None else raw


def date_of(meta: Any, keys: tuple[str, ...] = DATE_KEYS) -> str | None:
    """The conversation date a metadata dict gives: the first of ``keys`` that reads as a date; with the default
    keys, else any other key's value that does (not the trace's own clock: ``*_at``); None when none does."""
    if not isinstance(meta, dict):
        return None
    for key in keys:
        found = meta.get(key)
        if isinstance(found, str) and read_day(found) is not None:
            return _as_stamp(found)
    if keys is not DATE_KEYS:
        return None
    for key, found in meta.items():
        if key in keys or key in _CLOCK_KEYS or str(key).endswith("_at"):
            continue
        if isinstance(found, str) and read_day(found) is not None:
            return _as_stamp(found)
    return None
