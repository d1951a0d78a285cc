"""Datasets: LoCoMo loading, the synthetic generator, and splits by conversation."""

from memopt.data.locomo import load_locomo, parse_locomo, to_locomo
from memopt.data.model import CATEGORIES, NOT_MENTIONED, Case, Conversation, Session, Turn

__all__ = [
    "CATEGORIES",
    "NOT_MENTIONED",
    "Case",
    "Conversation",
    "Session",
    "Turn",
    "load_locomo",
    "parse_locomo",
    "to_locomo",
]
