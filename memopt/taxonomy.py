"""The failure taxonomy (MemTraceBench's labels) and the stage each operation belongs to.

- ``ExtractionError``: the needed information never entered any memory unit.
- ``UpdateError``: a unit held it and a later update removed or degraded it.
- ``DeletionError``: a unit holding it was deleted.
- ``RetrievalError``: the store held it at question time but the retrieved context did not.
- ``ResponseError``: the context held everything and the answer was still wrong.

Shared by tracing (MemTrace JSON), attribution and feedback, so no stage imports a later one for it.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["ERROR_TYPES", "ErrorType", "STAGES", "stage_of", "error_of_stage"]

ErrorType = Literal["ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError"]
ERROR_TYPES: tuple[str, ...] = ("ExtractionError", "UpdateError", "DeletionError", "RetrievalError", "ResponseError")

STAGES: dict[str, str] = {
    **dict.fromkeys(("extract", "facts", "episode", "summarize", "segment", "profile", "chunk"), "extraction"),
    "update": "update",
    "delete": "deletion",
    **dict.fromkeys(("retrieve", "search_similar", "rewrite_query", "fuse", "truncate"), "retrieval"),
    "answer": "response",
}
_ERROR_OF_STAGE = {"extraction": "ExtractionError", "update": "UpdateError", "deletion": "DeletionError",
                   "retrieval": "RetrievalError", "response": "ResponseError"}


def stage_of(operation: str) -> str:
    """The stage of an operation name (``extraction``, ``update``, ``retrieval``, ``response``; else ``other``)."""
    return STAGES.get(operation, "other")


def error_of_stage(stage: str, *, deleted: bool = False) -> str:
    """The error type a fault at a stage is labelled with (an update stage that deleted: DeletionError)."""
    if stage == "update" and deleted:
        return "DeletionError"
    return _ERROR_OF_STAGE.get(stage, "ResponseError")
