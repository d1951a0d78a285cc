"""A team's labels of attributed failures: MemTraceBench annotations in a sidecar file beside the graphs.

`memopt label DIR` writes them (``DIR/labels.jsonl``, `LABELS_FILE`: not ``*.json``, which a trace directory keeps
for graphs); `memopt attribute` and the optimizer leave
the flagged cases out of their failures, and `memopt bench attribution --labels FILE` scores every method against
the rest. One label per case, with the reviewer's decision:

- ``accepted``: the attribution was right (``final_error_type`` / ``final_op_id`` are the attribution's);
- ``corrected``: the reviewer picked another op and / or type;
- ``flagged``: not a memory failure to blame — a wrong expected answer, a wrong judge verdict, or not a memory
  error (`FLAGS`). Its ``final_error_type`` is the non-memory label MemTraceBench's loader skips, and
  ``final_op_id`` is null.

The file holds one annotation per line (JSON Lines), each with MemTraceBench's fields
(``query_id`` = the case id, ``query``, ``golden_answers``, ``prediction``, ``source_evidence_ids``,
``final_error_type``, ``final_op_id`` — for a MemTraceBench graph its smartcomment ``op_id``) plus memopt's
(``schema`` = ``memopt.labels/1``, ``decision``, ``flags``, ``note``, ``graph``: the graph file relative to the
labels file, ``op_node``: the op's node id in memopt's graph, ``attributed``: the attribution reviewed,
``labelled_at``). Saving is atomic
(`memopt.core.files.write_atomic`); a damaged file is a `DataError` naming it and the annotation, and is never
written over.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import loads_json, read_text, write_atomic
from memopt.taxonomy import ERROR_TYPES

__all__ = ["LABELS_FILE", "SCHEMA", "DECISIONS", "FLAGS", "FLAG_TEXT", "Label", "LabelSet", "load_labels",
           "labels_beside"]

LABELS_FILE = "labels.jsonl"
SCHEMA = "memopt.labels/1"
DECISIONS = ("accepted", "corrected", "flagged")
# flag → the non-memory label MemTraceBench's loader skips (its annotators' spellings)
FLAGS = {"wrong_expected_answer": "annotation_error", "wrong_judge_verdict": "LLMJudgeError",
         "not_memory_error": "non_memory_error"}
FLAG_TEXT = {"wrong_expected_answer": "wrong expected answer", "wrong_judge_verdict": "wrong judge verdict",
             "not_memory_error": "not a memory error"}


@dataclass(frozen=True)
class Label:
    """A reviewer's verdict on one attributed failure (see the module docstring)."""

    case_id: str
    decision: str
    final_error_type: str | None = None
    final_op_id: str | None = None
    op_node: str | None = None
    flags: tuple[str, ...] = ()
    note: str = ""
    graph: str = ""
    query: str = ""
    golden_answers: tuple[str, ...] = ()
    prediction: str | None = None
    source_evidence_ids: tuple[str, ...] = ()
    attributed: dict[str, Any] = field(default_factory=dict)
    labelled_at: str = ""

    def __post_init__(self) -> None:
        if self.decision not in DECISIONS:
            raise ValueError(f"decision {self.decision!r} is not one of {', '.join(DECISIONS)}")
        unknown = [f for f in self.flags if f not in FLAGS]
        if unknown:
            raise ValueError(f"flag {unknown[0]!r} is not one of {', '.join(FLAGS)}")
        if self.decision == "flagged":
            if not self.flags:
                raise ValueError("a flagged case needs a flag: " + ", ".join(FLAGS))
        elif self.final_error_type not in ERROR_TYPES or not self.final_op_id:
            raise ValueError(f"an {self.decision} case needs final_error_type (one of {', '.join(ERROR_TYPES)}) "
                             "and final_op_id")

    @property
    def flagged(self) -> bool:
        """Whether the case is not a memory failure (it leaves failure counts and feedback)."""
        return self.decision == "flagged"

    def to_annotation(self) -> dict[str, Any]:
        """The MemTraceBench annotation of this label (with memopt's fields)."""
        return {"schema": SCHEMA, "query_id": self.case_id, "query": self.query,
                "golden_answers": list(self.golden_answers),
                "prediction": self.prediction, "source_evidence_ids": list(self.source_evidence_ids),
                "final_error_type": FLAGS[self.flags[0]] if self.flagged else self.final_error_type,
                "final_op_id": None if self.flagged else self.final_op_id, "decision": self.decision,
                "flags": list(self.flags), "note": self.note, "graph": self.graph, "op_node": self.op_node,
                "attributed": self.attributed, "labelled_at": self.labelled_at}

    @classmethod
    def from_annotation(cls, raw: Any, *, where: str) -> Label:
        """Read one annotation back; anything malformed is a `DataError` naming ``where``."""
        if not isinstance(raw, dict):
            raise DataError(f"{where}: expected an object, got {type(raw).__name__}.")
        try:
            golden = raw.get("golden_answers") or []
            return cls(str(raw["query_id"]), str(raw["decision"]),
                       None if raw.get("decision") == "flagged" else raw.get("final_error_type"),
                       None if raw.get("decision") == "flagged" else raw.get("final_op_id"), raw.get("op_node"),
                       tuple(raw.get("flags") or ()), str(raw.get("note") or ""), str(raw.get("graph") or ""),
                       str(raw.get("query") or ""), tuple(str(g) for g in (golden if isinstance(golden, list)
                                                                           else [golden])),
                       raw.get("prediction"), tuple(str(e) for e in raw.get("source_evidence_ids") or ()),
                       dict(raw.get("attributed") or {}), str(raw.get("labelled_at") or ""))
        except KeyError as e:
            raise DataError(f"{where}: no {e.args[0]!r}; every annotation has query_id and decision.") from None
        except (TypeError, ValueError) as e:
            raise DataError(f"{where}: {e}.") from None


@dataclass(frozen=True)
class LabelSet:
    """The labels of one sidecar file, by case id."""

    path: Path
    labels: dict[str, Label] = field(default_factory=dict)

    @property
    def flagged(self) -> frozenset[str]:
        """The case ids flagged as no memory failure."""
        return frozenset(k for k, v in self.labels.items() if v.flagged)

    def counts(self) -> dict[str, int]:
        """How many labels of each decision."""
        return dict(Counter(v.decision for v in self.labels.values()))

    def with_label(self, label: Label) -> LabelSet:
        """This set with ``label`` added (or replacing that case's label), stamped with the time now."""
        stamped = replace(label, labelled_at=label.labelled_at or dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))
        return LabelSet(self.path, {**self.labels, label.case_id: stamped})

    def save(self) -> Path:
        """Write the file atomically (a temporary file, then a rename)."""
        return write_atomic(self.path, "".join(json.dumps(v.to_annotation(), ensure_ascii=False) + "\n"
                                               for v in self.labels.values()))


def labels_beside(directory: str | Path) -> Path:
    """Where the labels of the graphs in ``directory`` live: ``directory/labels.jsonl``."""
    return Path(directory) / LABELS_FILE


def load_labels(path: str | Path, *, missing_ok: bool = False) -> LabelSet:
    """The labels of a sidecar file (an empty set when it does not exist and ``missing_ok``)."""
    path = Path(path)
    if missing_ok and not path.exists():
        return LabelSet(path)
    text = read_text(path, missing="no such labels file (write one with `memopt label DIR`).")
    labels: dict[str, Label] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = loads_json(line)
        except json.JSONDecodeError as e:
            raise DataError(f"{path}: line {n}: not JSON ({e.msg}); the file is damaged: repair that line or move "
                            "the file away (memopt never writes over it).") from None
        if isinstance(raw, dict) and raw.get("schema") != SCHEMA:
            raise DataError(f"{path}: line {n}: schema {raw.get('schema')!r}; this memopt reads {SCHEMA!r} "
                            "(a file `memopt label` wrote).")
        label = Label.from_annotation(raw, where=f"{path}: line {n}")
        labels[label.case_id] = label
    return LabelSet(path, labels)
