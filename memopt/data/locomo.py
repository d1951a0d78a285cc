"""Read LoCoMo-format JSON: a list of samples, or one sample.

A sample is ``{sample_id, conversation{speaker_a, speaker_b, session_N_date_time, session_N[{speaker,
dia_id, text}]}, qa[{question, answer | adversarial_answer, evidence, category}]}``. Image turns
(``blip_caption``) keep their caption in the text, as LoCoMo's own evaluation does. Category 5
(adversarial) questions have the gold answer "Not mentioned"; the tempting wrong answer is kept as
``Case.adversarial_answer``.

Malformed input raises one `DataError` naming the file and the JSON path of the problem; so do a dia_id that is
empty, holds ``@`` (the graphs' version mark) or a control character, or is another turn's of the sample (each names
one node of the graph), two keys for one session (``session_1`` and ``session_01``), and a gold answer that is
empty, true / false, a list or an object.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import read_json
from memopt.core.text import parse_session_date
from memopt.data.model import NOT_MENTIONED, Case, Conversation, Session, Turn

__all__ = ["load_locomo", "parse_locomo", "to_locomo"]

_SESSION_KEY = re.compile(r"^session_(\d+)$")


def load_locomo(path: str | Path) -> list[Conversation]:
    """Load LoCoMo-format JSON from ``path`` (a list of samples or a single sample)."""
    raw = read_json(path, missing="no such data file. Pass a LoCoMo JSON file or `synthetic`.")
    return parse_locomo(raw, source=str(path))


def parse_locomo(raw: Any, *, source: str = "<data>") -> list[Conversation]:
    """Parse already-decoded LoCoMo JSON; errors name ``source`` and the JSON path."""
    samples = raw if isinstance(raw, list) else [raw]
    if not samples:
        raise DataError(f"{source}: the file holds no samples (an empty list).")
    conversations = []
    seen: set[str] = set()
    for i, sample in enumerate(samples):
        where = f"[{i}]" if isinstance(raw, list) else "$"
        conv = _sample(sample, source, where)
        if conv.sample_id in seen:
            raise DataError(f"{source}: {where}.sample_id: duplicate sample_id {conv.sample_id!r}.")
        seen.add(conv.sample_id)
        conversations.append(conv)
    if not any(conv.cases for conv in conversations):
        raise DataError(f"{source}: no sample has a question (every 'qa' list is empty or missing); memopt scores "
                        "the answers to a sample's 'qa' questions, so add them.")
    return conversations


def _fail(source: str, where: str, what: str) -> DataError:
    return DataError(f"{source}: {where}: {what}")


def _get(obj: Any, key: str, kind: type | tuple[type, ...], source: str, where: str) -> Any:
    if not isinstance(obj, dict):
        raise _fail(source, where, f"expected an object, found {type(obj).__name__}.")
    if key not in obj:
        raise _fail(source, f"{where}.{key}", "missing.")
    value = obj[key]
    if not isinstance(value, kind):
        names = " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))
        raise _fail(source, f"{where}.{key}", f"expected {names}, found {type(value).__name__}.")
    return value


def _sample(sample: Any, source: str, where: str) -> Conversation:
    sample_id = str(_get(sample, "sample_id", (str, int), source, where))
    if not sample_id.strip() or any(unicodedata.category(c) == "Cc" for c in sample_id):
        raise _fail(source, f"{where}.sample_id", f"{sample_id!r}: a sample id must be non-empty text without line "
                    "breaks or control characters (it names the case ids and the graph files of `memopt run --trace`).")
    conv = _get(sample, "conversation", dict, source, where)
    cwhere = f"{where}.conversation"
    speaker_a = _get(conv, "speaker_a", str, source, cwhere)
    speaker_b = _get(conv, "speaker_b", str, source, cwhere)
    sessions, dia_ids = [], set()
    for key in sorted((k for k in conv if _SESSION_KEY.match(k)), key=lambda k: int(k.split("_")[1])):
        index = int(key.split("_")[1])
        if sessions and sessions[-1].index == index:
            raise _fail(source, f"{cwhere}.{key}", f"a second session {index} (session_{index} is there too); number "
                        "the sessions session_1, session_2, ...")
        raw_turns = _get(conv, key, list, source, cwhere)
        date_time = conv.get(f"{key}_date_time")
        if not isinstance(date_time, str):
            raise _fail(source, f"{cwhere}.{key}_date_time",
                        'missing or not a string (e.g. "1:56 pm on 8 May, 2023").')
        turns = tuple(_turn(t, index, source, f"{cwhere}.{key}[{j}]") for j, t in enumerate(raw_turns))
        for j, turn in enumerate(turns):  # a dia_id names one turn: evidence, and its node in the graphs
            if turn.dia_id in dia_ids:
                raise _fail(source, f"{cwhere}.{key}[{j}].dia_id", f"{turn.dia_id!r} is the dia_id of an earlier "
                            "turn too; give every turn its own (D<session>:<turn>).")
            dia_ids.add(turn.dia_id)
        sessions.append(Session(index, date_time, parse_session_date(date_time), turns))
    if not sessions:
        raise _fail(source, cwhere, "no session_N lists found.")
    qa = sample.get("qa", [])
    if not isinstance(qa, list):
        raise _fail(source, f"{where}.qa", f"expected a list, found {type(qa).__name__}.")
    cases = tuple(_case(q, sample_id, n, source, f"{where}.qa[{n}]") for n, q in enumerate(qa))
    return Conversation(sample_id, speaker_a, speaker_b, tuple(sessions), cases)


def _turn(raw: Any, session: int, source: str, where: str) -> Turn:
    speaker = _get(raw, "speaker", str, source, where)
    dia_id = _get(raw, "dia_id", str, source, where)
    if not dia_id.strip() or "@" in dia_id or any(unicodedata.category(c) == "Cc" for c in dia_id):
        raise _fail(source, f"{where}.dia_id", f"{dia_id!r}: a dia_id must be non-empty text without '@', line breaks "
                    "or control characters (it names the turn's node in the graphs, e.g. D1:3).")
    text = _get(raw, "text", str, source, where)
    caption = raw.get("blip_caption")
    if isinstance(caption, str) and caption:
        text = f"{text} [shares {caption}]"
    return Turn(dia_id, speaker, text, session)


def _case(raw: Any, sample_id: str, n: int, source: str, where: str) -> Case:
    question = _get(raw, "question", str, source, where)
    if not question.strip():
        raise _fail(source, f"{where}.question", "empty; write the question, or remove the entry.")
    category = raw.get("category")
    if isinstance(category, bool) or not isinstance(category, int) or not 1 <= category <= 5:
        raise _fail(source, f"{where}.category", f"expected an integer 1-5, found {category!r}.")
    adversarial = raw.get("adversarial_answer")
    if category == 5:
        gold = NOT_MENTIONED
    elif "answer" in raw and raw["answer"] is not None:
        gold = str(raw["answer"])
        if isinstance(raw["answer"], (bool, list, dict)) or not gold.strip():
            raise _fail(source, f"{where}.answer", f"expected the gold answer as text or a number, found "
                        f"{raw['answer']!r:.60}.")
    else:
        raise _fail(source, f"{where}.answer", "missing (only category 5 questions may omit it).")
    evidence = raw.get("evidence", [])
    if not isinstance(evidence, list):
        raise _fail(source, f"{where}.evidence", "expected a list of dia_ids.")
    return Case(
        case_id=f"{sample_id}:q{n}",
        sample_id=sample_id,
        question=question,
        gold=gold,
        evidence=tuple(str(e) for e in evidence),
        category=category,
        adversarial_answer=str(adversarial) if adversarial is not None else None,
    )


def to_locomo(conversation: Conversation) -> dict[str, Any]:
    """The LoCoMo JSON object of one conversation (inverse of parsing, captions stay in text)."""
    conv: dict[str, Any] = {"speaker_a": conversation.speaker_a, "speaker_b": conversation.speaker_b}
    for s in conversation.sessions:
        conv[f"session_{s.index}_date_time"] = s.date_time
        conv[f"session_{s.index}"] = [{"speaker": t.speaker, "dia_id": t.dia_id, "text": t.text} for t in s.turns]
    qa = []
    for c in conversation.cases:
        item: dict[str, Any] = {"question": c.question, "evidence": list(c.evidence), "category": c.category}
        if c.category == 5:
            item["adversarial_answer"] = c.adversarial_answer or c.gold
        else:
            item["answer"] = c.gold
        qa.append(item)
    return {"sample_id": conversation.sample_id, "conversation": conv, "qa": qa}
