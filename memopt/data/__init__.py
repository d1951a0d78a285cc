"""Datasets: LoCoMo and LongMemEval loading, the synthetic generator, and splits by conversation."""

from memopt.data.locomo import load_locomo, parse_locomo, to_locomo
from memopt.data.longmemeval import load_longmemeval, parse_longmemeval
from memopt.data.model import CATEGORIES, NOT_MENTIONED, Case, Conversation, Session, Turn

__all__ = [
    "CATEGORIES",
    "NOT_MENTIONED",
    "Case",
    "Conversation",
    "Session",
    "Turn",
    "load_locomo",
    "load_longmemeval",
    "parse_longmemeval",
    "parse_locomo",
    "to_locomo",
]
