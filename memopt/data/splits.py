"""Train / val / test splits by conversation (never by question: questions share memory).

>>> split_ids(["a", "b", "c", "d"], seed=0).sizes()
(2, 1, 1)
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass

from memopt.core.errors import ConfigError

__all__ = ["Split", "split_ids"]


@dataclass(frozen=True)
class Split:
    """Conversation ids of each part."""

    train: tuple[str, ...]
    val: tuple[str, ...]
    test: tuple[str, ...]

    def sizes(self) -> tuple[int, int, int]:
        """Number of conversations in train, val, test."""
        return len(self.train), len(self.val), len(self.test)

    def part(self, name: str) -> tuple[str, ...]:
        """The ids of one part by name ("train", "val", "test")."""
        if name not in ("train", "val", "test"):
            raise ConfigError(f"unknown split part {name!r}; use train, val or test.")
        return getattr(self, name)


def split_ids(ids: Sequence[str], fractions: tuple[float, float, float] = (0.5, 0.25, 0.25), *, seed: int = 0) -> Split:
    """Shuffle conversation ids with ``seed`` and cut them by ``fractions`` (each part ≥ 1 when possible)."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-6:
        raise ConfigError(f"split fractions {fractions} must be three non-negative numbers summing to 1.")
    if len(set(ids)) != len(ids):
        raise ConfigError("split: conversation ids must be unique.")
    order = sorted(ids, key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    random.Random(seed).shuffle(order)
    n = len(order)
    sizes = [round(f * n) for f in fractions]
    if n >= 3:
        for k in range(3):
            if fractions[k] > 0 and sizes[k] == 0:
                sizes[sizes.index(max(sizes))] -= 1
                sizes[k] = 1
    sizes[0] = n - sizes[1] - sizes[2]
    train, val = order[: sizes[0]], order[sizes[0]: sizes[0] + sizes[1]]
    return Split(tuple(train), tuple(val), tuple(order[sizes[0] + sizes[1]:]))
