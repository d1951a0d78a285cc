"""``error_counts``: tell the reflection LM only how many failures were blamed on the op, by error type.

A feedback kind between memopt's ``attribution`` (counts *and* worked examples) and ``score`` (the
training score only): it uses the round's attributions (so memopt rewrites the most blamed ops) but
shows no example, which isolates what the examples add.
"""

from __future__ import annotations

from typing import Any

from memopt.feedback import Feedback, FeedbackRequest, build_feedback, feedback_kind


@feedback_kind("error_counts", uses_attribution=True, control=True)
def error_counts(request: FeedbackRequest) -> dict[str, Any]:
    """Per blamed op: the counts of its error types and its prompt version, no examples."""
    return {op: Feedback(op, fb.prompt_version, fb.counts) for op, fb in build_feedback(request.blamed,
                                                                                         request.prompt_ops).items()}
