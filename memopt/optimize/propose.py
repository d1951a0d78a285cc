"""Ask the reflection LM for rewritten prompts of one operation (the standard `ProposeInstructions`).

`reflect` keeps what was asked and answered, the way GEPA logs a reflective proposal: the messages sent to
the reflection LM and its reply (a `Reflection`, which the tracker logs as an MLflow trace);
`propose_instructions` returns the proposals only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Proposal", "Reflection", "reflect", "propose_instructions", "as_edit", "MAX_INSTRUCTION_CHARS"]

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


@dataclass
class Reflection:
    """One proposal: the op (``extract``) and its description (``mem0.extract: ...``), the messages the reflection
    LM was sent, its reply (the last call's, when a reply had to be asked again), the model, when it started and
    how long it took, and the proposals taken from it."""

    op: str
    operation: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    reply: str = ""
    model: str = ""
    started: float = 0.0
    seconds: float = 0.0
    calls: int = 0
    proposals: list[Proposal] = field(default_factory=list)


def _listener(record: Reflection) -> Any:
    """A DSPy callback that keeps the reflection LM's messages and reply in ``record``."""
    from dspy.utils.callback import BaseCallback

    class Listen(BaseCallback):
        def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
            record.messages = [dict(m) for m in inputs.get("messages") or []] or \
                [{"role": "user", "content": str(inputs.get("prompt") or "")}]
            record.calls += 1

        def on_lm_end(self, call_id: str, outputs: Any, exception: Exception | None = None) -> None:
            first = (outputs or [""])[0] if isinstance(outputs, list) else outputs
            record.reply = str(first.get("text", first) if isinstance(first, dict) else first or "")

    return Listen()


def propose_instructions(reflection_lm: Any, *, operation: str, current: str, feedback: str,
                         k: int) -> list[Proposal]:
    """Up to ``k`` distinct rewritten prompts (never the current one); empty when the LM offers none (see `reflect`)."""
    return reflect(reflection_lm, op=operation.split(":", 1)[0], operation=operation, current=current,
                   feedback=feedback, k=k).proposals


def reflect(reflection_lm: Any, *, op: str, operation: str, current: str, feedback: str, k: int) -> Reflection:
    """Ask the reflection LM once: up to ``k`` distinct rewritten prompts (never the current one; none when the LM
    offers none), with the messages and the reply.

    A proposal that only appends to the current prompt (as a real LM may still write) is turned into edits.

    A reflection LM that fails (after its retries) raises `LMError` naming it.
    """
    import dspy

    from memopt.lm.adapter import adapter_scope
    from memopt.lm.build import ask, specs_of
    from memopt.lm.explain import explain_lm_error
    from memopt.lm.signatures import ProposeInstructions
    from memopt.lm.spec import LMSpec

    record = Reflection(op, operation, model=str(getattr(reflection_lm, "model", "")), started=time.time())
    clock = time.perf_counter()
    try:
        with dspy.context(lm=reflection_lm, callbacks=[*dspy.settings.get("callbacks", []), _listener(record)]), \
                adapter_scope(reflection_lm):
            proposals = ask(dspy.Predict(ProposeInstructions), lm=reflection_lm, operation=operation,
                            current_instruction=current, feedback=feedback, n_candidates=k).proposals
    except Exception as e:
        specs = specs_of(reflection_lm) or []
        model = str(reflection_lm.model)
        raise explain_lm_error(specs[0] if len(specs) == 1 else LMSpec(raw=model, model=model), e) from e
    record.seconds = time.perf_counter() - clock
    out: list[Proposal] = []
    for item in proposals or []:
        text, changes = _parts(item)
        text, edits = as_edit(current, text.strip(), operation)
        changes = changes or edits
        if text and text != current.strip() and text not in (p.text for p in out) \
                and len(text) <= MAX_INSTRUCTION_CHARS:
            rationale = "; ".join(" ".join(c.split()) for c in changes if c.strip()) or "rewritten by the reflection LM"
            out.append(Proposal(text, rationale))
    record.proposals = out[:k]
    return record
