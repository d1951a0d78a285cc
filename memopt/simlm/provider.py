"""memopt's own in-process LM provider: ``sim``, SimLM (the embedded simulator, `memopt.simlm`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memopt.lm.providers import lm_provider

if TYPE_CHECKING:
    from memopt.lm.spec import LMSpec

__all__: list[str] = []


@lm_provider("sim", simulated=True)
def sim(spec: LMSpec, seed: int) -> Any:
    """SimLM's DSPy engine, seeded by the spec (``sim:SEED``) or else by the run."""
    from memopt.simlm import SimEngine

    return SimEngine(seed=spec.seed if spec.seed is not None else seed)
