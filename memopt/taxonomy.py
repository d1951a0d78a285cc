"""The failure taxonomy (MemTraceBench's labels) and the stages an operation can belong to.

- ``ExtractionError``: the needed information never entered any memory unit.
- ``UpdateError``: a unit held it and a later update removed or degraded it.
- ``DeletionError``: a unit holding it was deleted.
- ``RetrievalError``: the store held it at question time but the retrieved context did not.
- ``ResponseError``: the context held everything and the answer was still wrong.

Each operation of a memory system declares its stage(s) in its `memopt.systems.base.OpSpec` (an op may
belong to more than one: Mem0's update decision both updates and deletes); the tracer records the
declarations in the graph (`memopt.trace.graph.op_stages`). Shared by tracing (MemTrace JSON),
attribution and feedback, so no stage imports a later one for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

__all__ = ["ERROR_TYPES", "ErrorType", "STAGES", "Stage", "error_of_stage", "error_of_stages"]

ErrorType = Literal["ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"]
ERROR_TYPES: tuple[str, ...] = ("ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError")

Stage = Literal["extraction", "update", "deletion", "retrieval", "response"]
STAGES: tuple[str, ...] = ("extraction", "update", "deletion", "retrieval", "response")
_ERROR_OF_STAGE = dict(zip(STAGES, ERROR_TYPES, strict=True))


def error_of_stage(stage: str, *, deleted: bool = False) -> str:
    """The error type a fault at a stage is labelled with (an update stage that deleted: DeletionError)."""
    if stage == "update" and deleted:
        return "DeletionError"
    return _ERROR_OF_STAGE.get(stage, "ResponseError")


def error_of_stages(stages: Iterable[str], *, deleted: bool = False) -> str:
    """The error type of a fault at an op of these stages: DeletionError when it deleted what held the
    information (and it updates or deletes), else the error of its first stage (ResponseError with none)."""
    stages = tuple(stages)
    if deleted and {"update", "deletion"} & set(stages):
        return "DeletionError"
    return error_of_stage(stages[0]) if stages else "ResponseError"
