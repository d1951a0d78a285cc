"""Optimizers: rewrite the prompts of the blamed operations, round after round."""

from memopt.optimize.reflective import ReflectiveOptimizer
from memopt.optimize.state import OptimizeState, RoundRecord

__all__ = ["OptimizeState", "ReflectiveOptimizer", "RoundRecord"]
