"""The result of attribution: which operation a failed answer is blamed on, and why.

Saved as JSON lines, one `Attribution` per failed case. ``op_id`` is the graph's own id of the blamed op (a
smartcomment ``op-…`` for a smartcomment graph, memopt's op id otherwise), ``op_name`` its name there
(``summarizer.rewrite_running_summary``; memopt's operation for memopt's graphs), ``node_id`` the op's node in
memopt's graph when that differs from ``op_id``; ``question`` the failed question; ``evidence`` where the turns
it started from came from (``gold`` or ``retrieved``). Lines written before these fields existed read with
them empty.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from memopt.core.errors import DataError
from memopt.core.files import loads_json, write_atomic
from memopt.taxonomy import ERROR_TYPES

__all__ = ["Attribution", "save_attributions", "load_attributions"]


@dataclass(frozen=True)
class Attribution:
    """A failed case blamed on its earliest decisive faulty operation."""

    case_id: str
    error_type: str
    op_id: str
    operation: str
    evidence_path: tuple[str, ...] = ()
    reason: str = ""
    confidence: float = 1.0
    judge_calls: int = 0
    verified: bool | None = None
    method: str = ""
    seconds: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    question: str = ""
    op_name: str = ""
    node_id: str = ""
    evidence: str = ""

    def __post_init__(self) -> None:
        if self.error_type not in ERROR_TYPES:
            raise ValueError(f"{self.case_id}: error type {self.error_type!r} is not one of {', '.join(ERROR_TYPES)}")

    @property
    def masked_by(self) -> str | None:
        """For a fault behind the first (`memopt.attribution.masked`), the op of the first fault; else None."""
        return self.details.get("masked_by")

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out = asdict(self)
        out["evidence_path"] = list(self.evidence_path)
        return out

    @property
    def node(self) -> str:
        """The op's node in memopt's graph (``node_id`` when set, else ``op_id``)."""
        return self.node_id or self.op_id

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Attribution:
        """Read the JSON form back (keys this version does not know are left out)."""
        known = {f.name for f in fields(cls)}
        return cls(**{**{k: v for k, v in raw.items() if k in known},
                      "evidence_path": tuple(raw.get("evidence_path", ()))})


def save_attributions(attributions: list[Attribution], path: str | Path) -> Path:
    """Write attributions as JSON lines (atomically)."""
    return write_atomic(path, "".join(json.dumps(a.to_dict(), ensure_ascii=False) + "\n" for a in attributions))


def load_attributions(path: str | Path) -> list[Attribution]:
    """Read attributions written by `save_attributions`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: no such attributions file (write one with `memopt attribute --out {path}`).")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(Attribution.from_dict(loads_json(line)))
        except (json.JSONDecodeError, TypeError, ValueError) as e:
            raise DataError(f"{path}: line {n}: not an attribution ({e}).") from None
    return out
