"""The registry of feedback kinds: ``@feedback_kind("name")``, entry points, lookup by name; memopt's five kinds.

A feedback kind is what the reflection LM reads about each operation it rewrites (`memopt.feedback.build`).
It is a function from a `FeedbackRequest` (the round's attributed failures, its training results and
score, the ops it may rewrite) to `Feedback` per operation, registered with ``@feedback_kind("name")``
or by an installed package through an entry point in the ``memopt.feedback_kinds`` group (the rules of
`memopt.registry`: a plug-in cannot take a shipped name). What it needs is declared on registration,
and the optimizers and benches read those declarations instead of keeping their own lists:

- ``uses_attribution``: it reads the round's attributions; the train split is evaluated traced, failures
  are attributed and the ``ops_per_round`` most blamed ops are rewritten. Without it, the LLM ops are
  taken round-robin (``ops_per_round`` per round) and the train split is evaluated untraced;
- ``gepa``: the ``gepa`` optimizer takes it (per case: with attribution, the blamed predictor's
  feedback; without, the question, gold answer, prediction and F1);
- ``control``: a control of the feedback bench (its name shows in run names), not memopt's method;
- ``rendering_of``: the kind whose feedback it re-writes in another format (`memopt.feedback.formats`:
  ``attribution_prose``, ``attribution_json``, ...); the feedback bench runs these only when asked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memopt.feedback.formats import FORMATS
from memopt.registry import Registry, entry_adopter

__all__ = ["FeedbackKind", "FeedbackRequest", "feedback_kind", "feedback_kinds", "kind_names", "get_kind", "GROUP",
           "rendering_kinds"]

GROUP = "memopt.feedback_kinds"


@dataclass(frozen=True)
class FeedbackRequest:
    """What a feedback kind may read in one round."""

    blamed: list[tuple[Any, Any]]  # (FailedCase, Attribution) pairs; empty unless the kind uses attribution
    prompt_ops: Mapping[str, Sequence[str]]  # each op → the LLM ops whose prompts steer it
    ops: list[str]  # the LLM ops chosen round-robin (kinds without attribution write feedback for these)
    versions: Mapping[str, str | None]  # each LLM op's prompt version
    metrics: dict[str, Any] = field(default_factory=dict)  # the training score (f1, judge, n)
    results: list[Any] = field(default_factory=list)  # the training cases' results
    round_index: int = 1


Build = Callable[[FeedbackRequest], dict[str, Any]]


@dataclass(frozen=True)
class FeedbackKind:
    """A registered feedback kind: its name, its builder, and what it needs (see the module docstring)."""

    name: str
    build: Build
    uses_attribution: bool = True
    gepa: bool = False
    control: bool = False
    rendering_of: str | None = None

    def __call__(self, request: FeedbackRequest) -> dict[str, Any]:
        """The feedback per operation for one round."""
        return self.build(request)


_adopt = entry_adopter("feedback kind", FeedbackKind, "a function of (FeedbackRequest) → feedback per op")


feedback_kinds: Registry[FeedbackKind] = Registry("feedback kind", GROUP, "memopt.feedback.kinds", _adopt)


def feedback_kind(name: str, *, uses_attribution: bool = True, gepa: bool = False, control: bool = False,
                  rendering_of: str | None = None) -> Callable[[Build], FeedbackKind]:
    """Decorator: register a function of (FeedbackRequest) → {op: Feedback} as the feedback kind ``name``."""

    def register(fn: Build) -> FeedbackKind:
        kind = FeedbackKind(name, fn, uses_attribution, gepa, control, rendering_of)
        return feedback_kinds.register(name, kind, module=getattr(fn, "__module__", None) or "?")

    return register


def kind_names() -> list[str]:
    """Every feedback kind: memopt's own in their order, then plug-ins."""
    return feedback_kinds.names()


def get_kind(name: str) -> FeedbackKind:
    """The feedback kind registered under ``name`` (a `ConfigError` listing the known ones otherwise)."""
    return feedback_kinds.get(name)


# memopt's own five kinds (their texts: `memopt.feedback.build`)

@feedback_kind("attribution", gepa=True)
def attribution(request: FeedbackRequest) -> dict[str, Any]:
    """memopt's: the attributed failures grouped by operation, with examples and observations."""
    from memopt.feedback.build import build_feedback

    return build_feedback(request.blamed, request.prompt_ops)


@feedback_kind("outcome", uses_attribution=False, gepa=True, control=True)
def outcome(request: FeedbackRequest) -> dict[str, Any]:
    """What a GEPA user writes: failed training questions with gold, prediction and score."""
    from memopt.feedback.build import outcome_feedback

    return {op: outcome_feedback(op, request.results, request.versions.get(op), offset=request.round_index - 1)
            for op in request.ops}


@feedback_kind("score", uses_attribution=False)
def score(request: FeedbackRequest) -> dict[str, Any]:
    """The training score only."""
    from memopt.feedback.build import score_feedback

    return {op: score_feedback(op, request.metrics, request.versions.get(op)) for op in request.ops}


@feedback_kind("empty", control=True)
def empty(request: FeedbackRequest) -> dict[str, Any]:
    """Nothing, for memopt's blamed ops."""
    from memopt.feedback.build import build_feedback, empty_feedback

    return {op: empty_feedback(op, fb.prompt_version) for op, fb in build_feedback(request.blamed,
                                                                                    request.prompt_ops).items()}


@feedback_kind("misleading", control=True)
def misleading(request: FeedbackRequest) -> dict[str, Any]:
    """Examples of other ops' failures and contradicting advice: a control that must not help."""
    from memopt.feedback.build import misleading_feedback

    return misleading_feedback(request.blamed, request.prompt_ops)



def _format_control(fmt: str) -> FeedbackKind:
    """The control ``attribution_<fmt>``: memopt's attribution feedback with its examples written as ``fmt``."""

    def build(request: FeedbackRequest) -> dict[str, Any]:
        from memopt.feedback.build import build_feedback
        from memopt.feedback.formats import restyle

        return {op: restyle(fb, fmt) for op, fb in build_feedback(request.blamed, request.prompt_ops).items()}

    build.__doc__ = f"memopt's attribution feedback with its examples written as {fmt} (a format control)."
    return feedback_kind(f"attribution_{fmt}", control=True, rendering_of="attribution")(build)


for _fmt in FORMATS:  # the format controls (`memopt.feedback.formats`), after memopt's own five
    _format_control(_fmt)


def rendering_kinds(path: str) -> list[str]:
    """Register each rendering of a file (`memopt.feedback.formats.load_renderings`) as the control
    ``attribution_<name>``: memopt's attribution feedback with every example written by it; their names."""
    from memopt.feedback.formats import load_renderings

    names = []
    for name, one in load_renderings(path).items():
        kind = f"attribution_{name}"
        if kind not in feedback_kinds.names():
            def build(request: FeedbackRequest, one: Any = one, kind: str = kind) -> dict[str, Any]:
                from memopt.feedback.build import build_feedback
                from memopt.feedback.formats import restyle_with

                return {op: restyle_with(fb, kind, lambda ps: "\n\n".join(one(p) for p in ps))
                        for op, fb in build_feedback(request.blamed, request.prompt_ops).items()}

            build.__doc__ = f"memopt's attribution feedback with its examples written by {name} ({path})."
            feedback_kind(kind, control=True, rendering_of="attribution")(build)
        names.append(kind)
    return names
