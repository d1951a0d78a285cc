"""Feedback: attributions grouped by operation, turned into text a proposer can act on.

What it may import: `memopt.attribution`, `memopt.trace` and the stages below them; never the optimizer.

- `build`: `Feedback`, `build_feedback` (failure counts, examples, the prompt version), and the controls
  (outcome, score, empty, misleading);
- `formats`: the same evidence rendered in other layouts (prose, Q&A, JSON, tables, bullets, ...);
- `kinds`: the registry of feedback kinds (``@feedback_kind``, the ``memopt.feedback_kinds`` entry points)
  and memopt's five, each declaring what it needs.
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = ["Feedback", "build_feedback", "outcome_feedback", "score_feedback", "empty_feedback",
           "misleading_feedback", "FeedbackKind", "FeedbackRequest", "feedback_kind", "feedback_kinds", "get_kind",
           "kind_names"]

_HOME = {
    **dict.fromkeys(["Feedback", "build_feedback", "outcome_feedback", "score_feedback", "empty_feedback",
                     "misleading_feedback"], "memopt.feedback.build"),
    **dict.fromkeys(["FeedbackKind", "FeedbackRequest", "feedback_kind", "feedback_kinds", "get_kind", "kind_names"],
                    "memopt.feedback.kinds"),
}

__getattr__ = lazy_names("memopt.feedback", _HOME, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
