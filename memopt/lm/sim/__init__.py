"""SimLM: the deterministic, instruction-following simulated LM (see `memopt.lm.sim.engine`)."""

from memopt.lm.sim.engine import OPERATIONS, SimEngine, SimLM, operation_of

__all__ = ["OPERATIONS", "SimEngine", "SimLM", "operation_of"]
