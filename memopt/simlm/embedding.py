"""SimLM's embedding model: a deterministic *lexical* embedding, not a semantic one.

The features of a text are the Porter stems of its content words (`memopt.core.text`: stopwords dropped,
clitics removed, so "Alice's" counts as "alice"); a text without content words uses all its words, an
empty text one fixed feature. Each feature is hashed with BLAKE2b (stable across processes and Python
versions) to one of ``dimensions`` coordinates and a sign, weighted 1 + ln(count), and the vector is
L2-normalised. Cosine similarity is therefore high exactly when two texts share stems, names included
("Alice adopted a puppy" is close to "Alice's puppy was adopted", far from "Bob plays the guitar"):
synonyms and paraphrases without shared words are not close. Hash collisions add noise that shrinks as
``dimensions`` grows. Served at ``POST /v1/embeddings`` so Mem0's vector search works offline.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter

from memopt.core.text import content_words, stem, words

__all__ = ["embed", "DEFAULT_DIMENSIONS", "MAX_DIMENSIONS"]

DEFAULT_DIMENSIONS = 1536
MAX_DIMENSIONS = 8192
_EMPTY = "\x00empty"


def _slot(feature: str, dimensions: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return h % dimensions, 1.0 if h >> 63 else -1.0


def embed(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """The unit-length lexical embedding of ``text`` with ``dimensions`` coordinates (1..MAX_DIMENSIONS)."""
    if not 1 <= dimensions <= MAX_DIMENSIONS:
        raise ValueError(f"dimensions must be between 1 and {MAX_DIMENSIONS}, got {dimensions}")
    features = Counter(stem(w) for w in content_words(text)) or Counter(stem(w) for w in words(text))
    vector = [0.0] * dimensions
    for feature, count in (features or Counter({_EMPTY: 1})).items():
        index, sign = _slot(feature, dimensions)
        vector[index] += sign * (1.0 + math.log(count))
    norm = math.sqrt(sum(v * v for v in vector))
    if norm == 0.0:
        index, sign = _slot(_EMPTY, dimensions)
        vector[index], norm = sign, 1.0
    return [v / norm for v in vector]
