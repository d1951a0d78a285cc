"""The lexical rules of the judges, shared by `memopt.judge.judges.LexicalJudge` and SimLM as a judge LM.

The judges are lexical and take no directives (`memopt.judge.judges.LexicalJudge` calls these functions
directly, and SimLM runs them as a judge LM, so the two always agree). Their inputs may be quoted
between ``DATA_OPEN`` and ``DATA_CLOSE`` (as `memopt.judge.judges.LMJudge` sends them); the markers are
stripped before judging. Recall is the share of the reference's content stems (stopwords dropped,
Porter-stemmed) that the other text also holds:

- ``ANSWER_RECALL_THRESHOLD`` (0.5): a prediction is correct when it holds at least half of the
  gold answer's content stems and states each absolute date the gold states ("7 May 2023" is not
  matched by "8 May 2023"). When the gold abstains ("Not mentioned") the prediction must abstain
  too; otherwise an abstaining prediction is incorrect.
- ``CONTAINS_RECALL_THRESHOLD`` (0.6): a text contains a piece of information when one of its
  lines holds at least 60% of the information's content stems and states each absolute date the
  information states (a list-like "Max, Luna": each part in some line).

Dates are read whole (`memopt.core.text.find_dates`): "19 January, 2023", "January 19, 2023",
"19th January 2023" and "19/01/2023" are the same date; a date is stated when the other text has a
date with the same day, month and year, as far as the reference gives them ("May, 2023" needs
May 2023, "2023" any date in 2023, "13 August" 13 August of any year).

The fault-locating judge (`judge_locate`, behind the ``all_at_once`` attribution baseline) reads a
serialized trace, one block per operation, and applies the ``contains`` rule to each operation's
reads and writes. It simulates the long-context limit of an LM given a whole evolution graph in one
prompt: it reads only the first ``LOCATE_WINDOW`` (32,000) characters of the trace (about 8,000
tokens), so it finds the fault on small graphs and guesses on long ones. The window holds the whole
trace of a 6-session synthetic conversation in every pipeline (about 8,000 characters for Mem0,
24,000 for EverMemOS) but only the first sessions of a 40-session one (about 67,000 for Mem0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memopt.core.text import find_dates, overlap
from memopt.judge.metrics import is_abstention

__all__ = [
    "judge_answer",
    "judge_contains",
    "judge_locate",
    "recall",
    "has_dates_of",
    "unquote_data",
    "ANSWER_RECALL_THRESHOLD",
    "CONTAINS_RECALL_THRESHOLD",
    "LOCATE_WINDOW",
    "LOCATE_STAGE_ERRORS",
    "DATA_OPEN",
    "DATA_CLOSE",
]

ANSWER_RECALL_THRESHOLD = 0.5
CONTAINS_RECALL_THRESHOLD = 0.6
DATA_OPEN = "<<<DATA"
DATA_CLOSE = "DATA>>>"
LOCATE_WINDOW = 32_000
LOCATE_STAGE_ERRORS: dict[str, str] = {"extraction": "ExtractionError", "update": "UpdateError",
                                       "deletion": "DeletionError", "retrieval": "RetrievalError",
                                       "response": "ResponseError"}
_DATA_MARKERS = re.compile(re.escape(DATA_OPEN) + "|" + re.escape(DATA_CLOSE))


def unquote_data(text: str) -> str:
    """A judge input without its ``DATA_OPEN`` / ``DATA_CLOSE`` quote markers."""
    return _DATA_MARKERS.sub("", text).strip()


def recall(reference: str, text: str) -> float:
    """The share of ``reference``'s content stems that ``text`` also holds."""
    return overlap(reference, text)


def has_dates_of(information: str, text: str) -> bool:
    """Every absolute date of ``information`` is stated by ``text``, read whole (day, month and year it gives)."""
    stated = find_dates(text)
    return all(any(date.matched_by(other) for other in stated) for date in find_dates(information))


def judge_answer(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Correct when the prediction holds ≥ ANSWER_RECALL_THRESHOLD of the gold's content stems and its dates."""
    gold, prediction = unquote_data(inputs.get("gold_answer", "")), unquote_data(inputs.get("prediction", ""))
    if is_abstention(gold):
        return {"correct": is_abstention(prediction)}
    if is_abstention(prediction):
        return {"correct": False}
    return {"correct": recall(gold, prediction) >= ANSWER_RECALL_THRESHOLD and has_dates_of(gold, prediction)}


def _parts(information: str) -> list[str]:
    if find_dates(information) or "," not in information:
        return [information]
    return [p.strip() for p in information.split(",") if p.strip()]


def judge_contains(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """Contains when one line of the text holds ≥ CONTAINS_RECALL_THRESHOLD of the information's content stems.

    Statements are read line by line (a context is one item per line): words scattered over several
    items do not count. A list-like information ("Max, Luna") is contained when each of its parts is in
    some line. Dates must match whole: each absolute date of the information ("7 May 2023", "May 2023",
    "2023") must be stated by that line with the same parts, so "8 May 2023" does not contain "7 May 2023".
    """
    information, text = unquote_data(inputs.get("information", "")), unquote_data(inputs.get("text", ""))
    lines = [line for line in text.splitlines() if line.strip()] or [text]

    def found(part: str) -> bool:
        return any(recall(part, line) >= CONTAINS_RECALL_THRESHOLD and has_dates_of(part, line) for line in lines)

    return {"contains": all(found(part) for part in _parts(information))}


def _contains(information: str, items: str) -> bool:
    """`judge_contains` on one trace line, whose items are separated by `` | ``."""
    text = items.replace(" | ", "\n")
    return bool(judge_contains({"information": information, "text": text}, frozenset())["contains"])


_BLOCK_HEADER = re.compile(r"^\[(?P<op>[^\]\n]+)\] (?P<operation>\S+) \((?P<stage>[a-z]+)\)$")


@dataclass(frozen=True)
class _Block:
    op: str
    operation: str
    stage: str
    lines: dict[str, str]


def _blocks(trace: str) -> list[_Block]:
    out = []
    for chunk in trace.split("\n\n"):
        lines = chunk.strip().splitlines()
        header = _BLOCK_HEADER.match(lines[0]) if lines else None
        if header is not None:
            fields = dict(line.partition(": ")[::2] for line in lines[1:])
            out.append(_Block(header["op"], header["operation"], header["stage"], fields))
    return out


def judge_locate(inputs: dict[str, str], active: frozenset[str]) -> dict[str, Any]:
    """The earliest op whose reads contain the gold and whose writes do not, within ``LOCATE_WINDOW`` characters.

    The trace holds one block per op in time order, blocks separated by a blank line: a header
    ``[op_id] operation (stage)``, then ``reads: …``, ``writes: …`` and, for an op that deleted units,
    ``deletes: …`` (items separated by `` | ``). Contains is `judge_contains`'s rule. The error type
    comes from the stage (`LOCATE_STAGE_ERRORS`; an update whose deletes contain the gold: DeletionError).
    Only the first ``LOCATE_WINDOW`` characters are read (a block cut by the window is dropped when a
    whole one precedes it). With no faulty op among them, or a gold that abstains, it guesses: the last
    ``answer`` op read, else the last op read, with its stage's error type.
    """
    gold, trace = unquote_data(inputs.get("gold_answer", "")), unquote_data(inputs.get("trace", ""))
    read = trace[:LOCATE_WINDOW]
    if len(trace) > LOCATE_WINDOW and read.rfind("\n\n") > 0:
        read = read[:read.rfind("\n\n")]
    blocks = _blocks(read)
    if not blocks:
        return {"error_type": "ResponseError", "op_id": "none"}
    if not is_abstention(gold):
        for block in blocks:
            if _contains(gold, block.lines.get("reads", "")) and not _contains(gold, block.lines.get("writes", "")):
                deleted = block.stage == "update" and _contains(gold, block.lines.get("deletes", ""))
                error = "DeletionError" if deleted else LOCATE_STAGE_ERRORS.get(block.stage, "ResponseError")
                return {"error_type": error, "op_id": block.op}
    guess = next((b for b in reversed(blocks) if b.operation == "answer"), blocks[-1])
    return {"error_type": LOCATE_STAGE_ERRORS.get(guess.stage, "ResponseError"), "op_id": guess.op}
