"""LongMemEval files (``longmemeval_s.json``, ``_m``, ``_oracle``): one JSON list of question instances.

An instance is ``{question_id, question_type, question, answer, question_date, haystack_session_ids,
haystack_dates, haystack_sessions, answer_session_ids}``; a session is a list of turns ``{role: "user" |
"assistant", content, has_answer?}`` (``has_answer`` marks evidence turns, and may be present as false on
the others); dates look like ``2023/05/30 (Tue) 23:40``. Every question has its own haystack, so every
instance becomes one memopt conversation (``sample_id`` = ``question_id``, speakers ``User`` and
``Assistant``, sessions numbered from 1 in file order, turns ``D<session>:<turn>``) holding one case
(``<question_id>:q0``) whose evidence is its ``has_answer`` turns. Session dates are rewritten the
way LoCoMo writes them ("11:40 pm on 30 May, 2023") so every date reader in memopt understands them.

Categories (`QUESTION_TYPES`, named in `memopt.data.model.CATEGORIES`): 6 single-session-user,
7 single-session-assistant, 8 single-session-preference, 9 temporal-reasoning, 10 knowledge-update,
11 multi-session; a question id ending in ``_abs`` (abstention: the answer is not in the history) is
category 5 with gold "Not mentioned", scored as LoCoMo scores its adversarial questions (LongMemEval
reports abstention apart too). The question date is not given to the memory systems (memopt's cases
carry none), so "how many days ago" questions can only be answered from session dates.

Real files have quirks that are read as they are: a haystack date later than the question date,
numeric answers (kept as text), ``has_answer: false``. A question id names files (``memopt run
--trace`` writes ``<question_id>.json``), so it must be letters, digits, ``_``, ``-`` and ``.``.
Anything else malformed raises one `DataError`
naming the file and the JSON path (``lme.json: [3].haystack_sessions[0][2].role: expected "user" or
"assistant", found 'bot'``).
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import read_json, write_json
from memopt.core.text import MONTHS
from memopt.data.model import NOT_MENTIONED, Case, Conversation, Session, Turn

__all__ = ["QUESTION_TYPES", "is_longmemeval", "load_longmemeval", "parse_longmemeval", "parse_lme_date",
           "write_synthetic_longmemeval"]

QUESTION_TYPES = {"single-session-user": 6, "single-session-assistant": 7, "single-session-preference": 8,
                  "temporal-reasoning": 9, "knowledge-update": 10, "multi-session": 11}
SPEAKERS = {"user": "User", "assistant": "Assistant"}
_SAFE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,199}")
_DATE = re.compile(r"^\s*(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\(\s*[A-Za-z]{2,9}\s*\))?\s*(?:(\d{1,2}):(\d{2}))?\s*$")


def is_longmemeval(raw: Any) -> bool:
    """Whether decoded JSON looks like a LongMemEval file (a list of instances with ``question_id``)."""
    return isinstance(raw, list) and bool(raw) and isinstance(raw[0], dict) and (
        "question_id" in raw[0] or "haystack_sessions" in raw[0])


def parse_lme_date(text: str) -> dt.datetime | None:
    """``2023/05/30 (Tue) 23:40`` (weekday and time optional) as a datetime, or None."""
    m = _DATE.match(text)
    if m is None:
        return None
    year, month, day, hour, minute = (int(g) if g else 0 for g in m.groups())
    try:
        return dt.datetime(year, month, day, hour, minute)
    except ValueError:
        return None


def _locomo_date(when: dt.datetime) -> str:
    hour = when.hour % 12 or 12
    meridiem = "am" if when.hour < 12 else "pm"
    return f"{hour}:{when.minute:02d} {meridiem} on {when.day} {MONTHS[when.month - 1]}, {when.year}"


class _Reader:
    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, what: str) -> DataError:
        return DataError(f"{self.source}: {where}: {what}")

    def get(self, obj: dict[str, Any], key: str, kinds: tuple[type, ...], where: str, required: bool = True) -> Any:
        if key not in obj or obj[key] is None:
            if required:
                raise self.fail(f"{where}.{key}", "missing.")
            return None
        value = obj[key]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            names = " or ".join(dict.fromkeys({str: "a string", int: "a number", float: "a number", list: "a list",
                                               bool: "true or false", dict: "an object"}[k] for k in kinds))
            raise self.fail(f"{where}.{key}", f"expected {names}, found {type(value).__name__}.")
        return value


def load_longmemeval(path: str | Path) -> list[Conversation]:
    """Load a LongMemEval file: one conversation (and one case) per question instance."""
    raw = read_json(path, missing="no such data file. Pass a LongMemEval JSON file (e.g. longmemeval_s.json).")
    return parse_longmemeval(raw, source=str(path))


def parse_longmemeval(raw: Any, *, source: str = "<data>") -> list[Conversation]:
    """Parse decoded LongMemEval JSON; errors name ``source`` and the JSON path."""
    reader = _Reader(source)
    if not isinstance(raw, list) or not raw:
        raise reader.fail("(top level)", "expected a non-empty list of LongMemEval question instances.")
    conversations, seen = [], set()
    for i, item in enumerate(raw):
        conversation = _instance(reader, item, f"[{i}]")
        if conversation.sample_id in seen:
            raise reader.fail(f"[{i}].question_id", f"duplicate question_id {conversation.sample_id!r}.")
        seen.add(conversation.sample_id)
        conversations.append(conversation)
    return conversations


def _instance(reader: _Reader, item: Any, where: str) -> Conversation:
    if not isinstance(item, dict):
        raise reader.fail(where, f"expected an object (a question instance), found {type(item).__name__}.")
    qid = str(reader.get(item, "question_id", (str, int), where))
    if not _SAFE_ID.fullmatch(qid):
        raise reader.fail(f"{where}.question_id", f"{qid!r}: a question id names files (`memopt run --trace`); "
                                                  "use letters, digits, '_', '-' and '.' (not first).")
    qtype = reader.get(item, "question_type", (str,), where)
    if qtype not in QUESTION_TYPES:
        raise reader.fail(f"{where}.question_type", f"{qtype!r} is not a LongMemEval question type "
                                                    f"({', '.join(QUESTION_TYPES)}).")
    question = reader.get(item, "question", (str,), where)
    if not question.strip():
        raise reader.fail(f"{where}.question", "empty; write the question, or remove the instance.")
    answer = reader.get(item, "answer", (str, int, float), where)
    date = reader.get(item, "question_date", (str,), where, required=False)
    if date is not None and parse_lme_date(date) is None:
        raise reader.fail(f"{where}.question_date", f"{date!r} is not a date like '2023/05/30 (Tue) 23:40'.")
    raw_sessions = reader.get(item, "haystack_sessions", (list,), where)
    dates = reader.get(item, "haystack_dates", (list,), where)
    if len(dates) != len(raw_sessions):
        raise reader.fail(f"{where}.haystack_dates", f"{len(dates)} dates for {len(raw_sessions)} haystack sessions.")
    for key in ("haystack_session_ids", "answer_session_ids"):
        ids = reader.get(item, key, (list,), where, required=False)
        if ids is not None and not all(isinstance(x, (str, int)) and not isinstance(x, bool) for x in ids):
            raise reader.fail(f"{where}.{key}", "expected a list of session ids (strings).")
    sessions, evidence = [], []
    for s, (turns, day) in enumerate(zip(raw_sessions, dates, strict=True), start=1):
        swhere = f"{where}.haystack_sessions[{s - 1}]"
        when = parse_lme_date(day) if isinstance(day, str) else None
        if when is None:
            raise reader.fail(f"{where}.haystack_dates[{s - 1}]", f"{day!r} is not a date like '2023/05/30 (Tue) "
                                                                  "23:40'.")
        if not isinstance(turns, list):
            raise reader.fail(swhere, f"expected a list of turns, found {type(turns).__name__}.")
        parsed = []
        for t, turn in enumerate(turns, start=1):
            twhere = f"{swhere}[{t - 1}]"
            if not isinstance(turn, dict):
                raise reader.fail(twhere, f"expected a turn object, found {type(turn).__name__}.")
            role = reader.get(turn, "role", (str,), twhere)
            if role not in SPEAKERS:
                raise reader.fail(f"{twhere}.role", f'expected "user" or "assistant", found {role!r}.')
            content = reader.get(turn, "content", (str,), twhere)
            if reader.get(turn, "has_answer", (bool,), twhere, required=False):
                evidence.append(f"D{s}:{t}")
            parsed.append(Turn(f"D{s}:{t}", SPEAKERS[role], content, s))
        sessions.append(Session(s, _locomo_date(when), when.date(), tuple(parsed)))
    abstention = qid.endswith("_abs")
    case = Case(case_id=f"{qid}:q0", sample_id=qid, question=question,
                gold=NOT_MENTIONED if abstention else str(answer), evidence=tuple(evidence),
                category=5 if abstention else QUESTION_TYPES[qtype], question_date=date)
    return Conversation(qid, SPEAKERS["user"], SPEAKERS["assistant"], tuple(sessions), (case,))


def _question_type(category: int, evidence_speakers: set[str], speaker_b: str) -> str:
    if category == 2:
        return "temporal-reasoning"
    if category == 1:
        return "multi-session"
    if category == 3:
        return "single-session-preference"
    return "single-session-assistant" if evidence_speakers == {speaker_b} else "single-session-user"


def write_synthetic_longmemeval(spec: Any, out: str | Path) -> dict[str, Any]:
    """Write synthetic conversations as a LongMemEval-format file: one instance per question; return counts.

    The first speaker is the ``user``, the second the ``assistant``; LoCoMo categories map to question
    types (2 temporal-reasoning, 1 multi-session, 3 single-session-preference, 4 single-session-user or
    -assistant by who holds the evidence) and adversarial questions become ``_abs`` instances.
    """
    from memopt.data.synth import synthetic_conversations

    instances = []
    for conv in synthetic_conversations(spec):
        roles = {conv.speaker_a: "user", conv.speaker_b: "assistant"}
        last = max(s.date for s in conv.sessions if s.date)
        for n, case in enumerate(conv.cases):
            speakers = {conv.turn(d).speaker for d in case.evidence}
            qtype = _question_type(case.category, speakers, conv.speaker_b)
            instances.append({
                "question_id": f"{conv.sample_id}-q{n}{'_abs' if case.category == 5 else ''}",
                "question_type": qtype, "question": case.question,
                "answer": "The information is not mentioned in the chat history." if case.category == 5 else case.gold,
                "question_date": (dt.datetime.combine(last, dt.time(12, 0)) + dt.timedelta(days=1)).strftime(
                    "%Y/%m/%d (%a) %H:%M"),
                "haystack_session_ids": [f"{conv.sample_id}-s{s.index}" for s in conv.sessions],
                "haystack_dates": [dt.datetime.combine(s.date, dt.time(10, 0)).strftime("%Y/%m/%d (%a) %H:%M")
                                   for s in conv.sessions],
                "haystack_sessions": [[{"role": roles[t.speaker], "content": t.text,
                                        "has_answer": t.dia_id in case.evidence} for t in s.turns]
                                      for s in conv.sessions],
                "answer_session_ids": sorted({f"{conv.sample_id}-s{conv.turn(d).session}" for d in case.evidence}),
            })
    write_json(out, instances)
    types = Counter(i["question_type"] for i in instances)
    return {"questions": len(instances), "abstention": sum(i["question_id"].endswith("_abs") for i in instances),
            "by_question_type": dict(sorted(types.items()))}
