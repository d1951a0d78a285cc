"""The registry of optimizers: ``@optimizer("name")``, entry points, lookup by name.

An optimizer rewrites a memory system's prompts one round at a time: the run loop (`memopt.optimize.loop`)
builds it from the experiment and its scorer and calls ``step`` once per round (the `Optimizer` protocol).
It is registered with the decorator on a *factory* of (Experiment, Scorer) → Optimizer, or by an installed
package through an entry point in the ``memopt.optimizers`` group whose value is such a registered
`OptimizerEntry` (the rules of `memopt.registry`: a plug-in cannot take a shipped name). What the
optimizer reads is declared on registration, and the experiment's validation reads it:

- ``feedback``: the one feedback kind it reads (``score_only`` reads ``score``), None for any kind;
- ``gepa_feedback``: it takes only the feedback kinds declared ``gepa=True`` (`memopt.feedback.kinds`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memopt.registry import Registry, entry_adopter

if TYPE_CHECKING:
    from memopt.data.model import Conversation
    from memopt.optimize.reflective import RoundOutcome
    from memopt.optimize.scoring import Scorer
    from memopt.systems.base import MemorySystem

__all__ = ["Optimizer", "OptimizerEntry", "optimizer", "optimizers", "get_optimizer", "GROUP"]

GROUP = "memopt.optimizers"


class Optimizer(Protocol):
    """What the run loop calls: one round's ``step``, a ``describe`` for the logged params, a prompt ``guard``;
    and, if the optimizer has one, ``resume(records)`` with a checkpoint's round records before a resumed run's
    first round (an optimizer that learns from its rounds picks that up there)."""

    guard: Any

    def step(self, system: MemorySystem, round_index: int, *, trainset: list[Conversation],
             valset: list[Conversation], current_val: float) -> RoundOutcome | None:
        """Propose and choose new prompts for one round (None or an outcome without change: nothing better)."""

    def describe(self) -> dict[str, Any]:
        """The optimizer's settings, logged as ``optimizer.*`` params."""


# A factory of (the `memopt.optimize.experiment.Experiment`, its `Scorer`) → Optimizer. The experiment model is not
# imported here: it validates its ``optimizer`` key against this registry, so this module stays below it.
Factory = Callable[[Any, "Scorer"], Optimizer]


@dataclass(frozen=True)
class OptimizerEntry:
    """A registered optimizer: its name, its factory, and the feedback it reads (see the module docstring)."""

    name: str
    build: Factory
    feedback: str | None = None
    gepa_feedback: bool = False

    def __call__(self, experiment: Any, scorer: Scorer) -> Optimizer:
        """The optimizer of an experiment."""
        return self.build(experiment, scorer)

    def feedback_problem(self, feedback: str | None) -> str | None:
        """Why this optimizer cannot read feedback kind ``feedback`` (None when it can, or when none is set)."""
        if feedback is None:
            return None
        if self.feedback is not None and feedback != self.feedback:
            return f"{self.name} reads feedback {self.feedback!r} only; feedback {feedback!r} needs name: memtrace"
        if self.gepa_feedback:
            from memopt.feedback.kinds import feedback_kinds, get_kind

            if not get_kind(feedback).gepa:
                takes = " or ".join(n for n in feedback_kinds.shipped() if get_kind(n).gepa)
                return f"{self.name} takes feedback {takes}, not {feedback!r}"
        return None


_adopt = entry_adopter("optimizer", OptimizerEntry, "a function of (Experiment, Scorer) returning an optimizer")


optimizers: Registry[OptimizerEntry] = Registry("optimizer", GROUP, "memopt.optimize.optimizers", _adopt)


def optimizer(name: str, *, feedback: str | None = None,
              gepa_feedback: bool = False) -> Callable[[Factory], OptimizerEntry]:
    """Decorator: register a factory of (Experiment, Scorer) → Optimizer as the optimizer ``name``."""

    def register(fn: Factory) -> OptimizerEntry:
        module = getattr(fn, "__module__", None) or "?"
        return optimizers.register(name, OptimizerEntry(name, fn, feedback, gepa_feedback), module=module)

    return register


def get_optimizer(name: str) -> OptimizerEntry:
    """The optimizer registered under ``name`` (a `ConfigError` listing the known ones otherwise)."""
    return optimizers.get(name)
