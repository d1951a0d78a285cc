"""Ask the reflection LM for revised instructions of one operation (the standard `ProposeInstructions`)."""

from __future__ import annotations

from typing import Any

__all__ = ["propose_instructions", "MAX_INSTRUCTION_CHARS"]

MAX_INSTRUCTION_CHARS = 6000


def propose_instructions(reflection_lm: Any, *, operation: str, current: str, feedback: str, k: int) -> list[str]:
    """Up to ``k`` distinct revised instructions (never the current one); empty when the LM offers none.

    A reflection LM that fails (after its retries) raises `LMError` naming it.
    """
    import dspy

    from memopt.lm.adapter import adapter_scope
    from memopt.lm.config import ask, explain_lm_error, spec_of
    from memopt.lm.signatures import ProposeInstructions

    try:
        with dspy.context(lm=reflection_lm), adapter_scope(reflection_lm):
            proposals = ask(dspy.Predict(ProposeInstructions), lm=reflection_lm, operation=operation,
                            current_instruction=current, feedback=feedback, n_candidates=k).proposals
    except Exception as e:
        spec = spec_of(reflection_lm)
        raise explain_lm_error(spec if isinstance(spec, str) else str(reflection_lm.model), e) from e
    out: list[str] = []
    for text in proposals or []:
        text = str(text).strip()
        if text and text != current.strip() and text not in out and len(text) <= MAX_INSTRUCTION_CHARS:
            out.append(text)
    return out[:k]
