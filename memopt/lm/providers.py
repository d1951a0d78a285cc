"""The registry of in-process LM providers: ``@lm_provider("name")``, entry points, lookup by name.

An LM provider answers DSPy's calls inside memopt's process, with no server: it is a factory of a DSPy
engine (what ``dspy.LM(model, engine=...)`` takes) from the parsed spec and the run's seed. Its name is
an LM spec: ``NAME`` or ``NAME:ARG`` (``ARG`` is the spec's ``arg``), wherever an LM spec is accepted
(``--lm``, ``lm.task``, ``--judge-lm``). SimLM is memopt's own (``sim``, ``sim:SEED``); a package registers
more through an entry point in the ``memopt.lm_providers`` group (the rules of `memopt.registry`: a plug-in
cannot take a shipped name). Real providers are LiteLLM's (``openai/...``, ``MODEL@URL``), not registered here.
A provider declares ``simulated`` (its results are labelled simulated); calls are never cached on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memopt.registry import Registry, entry_adopter

__all__ = ["LMProvider", "lm_provider", "lm_providers", "GROUP"]

GROUP = "memopt.lm_providers"
EngineFactory = Callable[[Any, int], Any]  # (the parsed `memopt.lm.spec.LMSpec`, the run's seed) → a DSPy engine
# (not imported here: the spec parser reads this registry, so this module imports nothing of `memopt.lm`)


@dataclass(frozen=True)
class LMProvider:
    """A registered in-process LM provider: its name, its engine factory of (spec, seed), whether it simulates."""

    name: str
    engine: EngineFactory
    simulated: bool = False

    def __call__(self, spec: Any, seed: int) -> Any:
        """The DSPy engine for one spec."""
        return self.engine(spec, seed)


_adopt = entry_adopter("LM provider", LMProvider, "a function of (LMSpec, seed) returning a DSPy engine")


lm_providers: Registry[LMProvider] = Registry("LM provider", GROUP, "memopt.simlm.provider", _adopt)


def lm_provider(name: str, *, simulated: bool = False) -> Callable[[EngineFactory], LMProvider]:
    """Decorator: register a factory of (LMSpec, seed) → DSPy engine as the in-process LM provider ``name``."""

    def register(fn: EngineFactory) -> LMProvider:
        module = getattr(fn, "__module__", None) or "?"
        return lm_providers.register(name, LMProvider(name, fn, simulated), module=module)

    return register
