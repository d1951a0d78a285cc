"""Ask the reflection LM for rewritten prompts of one operation (the standard `ProposeInstructions`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Proposal", "propose_instructions", "as_edit", "MAX_INSTRUCTION_CHARS"]

MAX_INSTRUCTION_CHARS = 6000


@dataclass(frozen=True)
class Proposal:
    """A rewritten prompt and its rationale: one line per change (the prompt version's commit message)."""

    text: str
    rationale: str


def _parts(item: Any) -> tuple[str, list[str]]:
    """(prompt, changes) of one proposal, whether the LM returned the typed object, a dict or a bare string."""
    if isinstance(item, str):
        return item, []
    if isinstance(item, dict):
        return str(item.get("prompt", "")), [str(c) for c in item.get("changes") or []]
    return str(getattr(item, "prompt", "")), [str(c) for c in getattr(item, "changes", None) or []]


def as_edit(current: str, text: str, operation: str) -> tuple[str, list[str]]:
    """A proposal that only appended sentences to ``current``, turned into edits (`memopt.simlm.edits.edit`): each
    appended sentence replaces the sentences it contradicts; any other proposal is returned as it is."""
    from memopt.simlm import edit, operation_kind, sentence_spans

    base = current.strip()
    if not text.startswith(base) or text == base:
        return text, []
    kind = operation_kind(operation) or "answer"
    out, changes = base, []
    for span in sentence_spans(text[len(base):]):
        done = edit(out, span.text, kind)
        if done.change:
            out, changes = done.prompt, [*changes, done.change]
    return out.strip(), changes


def propose_instructions(reflection_lm: Any, *, operation: str, current: str, feedback: str,
                         k: int) -> list[Proposal]:
    """Up to ``k`` distinct rewritten prompts (never the current one); empty when the LM offers none.

    A proposal that only appends to the current prompt (as a real LM may still write) is turned into edits.

    A reflection LM that fails (after its retries) raises `LMError` naming it.
    """
    import dspy

    from memopt.lm.adapter import adapter_scope
    from memopt.lm.build import ask, specs_of
    from memopt.lm.explain import explain_lm_error
    from memopt.lm.signatures import ProposeInstructions
    from memopt.lm.spec import LMSpec

    try:
        with dspy.context(lm=reflection_lm), adapter_scope(reflection_lm):
            proposals = ask(dspy.Predict(ProposeInstructions), lm=reflection_lm, operation=operation,
                            current_instruction=current, feedback=feedback, n_candidates=k).proposals
    except Exception as e:
        specs = specs_of(reflection_lm) or []
        model = str(reflection_lm.model)
        raise explain_lm_error(specs[0] if len(specs) == 1 else LMSpec(raw=model, model=model), e) from e
    out: list[Proposal] = []
    for item in proposals or []:
        text, changes = _parts(item)
        text, edits = as_edit(current, text.strip(), operation)
        changes = changes or edits
        if text and text != current.strip() and text not in (p.text for p in out) \
                and len(text) <= MAX_INSTRUCTION_CHARS:
            rationale = "; ".join(" ".join(c.split()) for c in changes if c.strip()) or "rewritten by the reflection LM"
            out.append(Proposal(text, rationale))
    return out[:k]
