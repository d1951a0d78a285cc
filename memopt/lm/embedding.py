"""The ``embedding`` LM role: texts to vectors, for dense retrieval (the evidence a failed answer starts from).

Spec forms:

- ``sim`` (the default, offline) or ``sim:DIMS``: a deterministic local embedding, made here with no model, no
  download and no network: the Porter stems of a text's content words and the character trigrams of each
  word, hashed (BLAKE2b, stable across processes) to ``DIMS`` (default 512) signed coordinates, weighted
  1 + ln(count), unit length. Texts are close when they share words or word pieces ("repotted" / "repot",
  "Didsbury's" / "Didsbury"), not when they mean the same;
- any LiteLLM embedding model: ``openai/text-embedding-3-small``, ``MODEL@http://HOST:PORT/v1`` for an
  OpenAI-compatible server (a ``memopt serve`` SimLM server answers ``/v1/embeddings``), called through
  ``litellm.embedding`` in batches. API keys come from the environment only, as for every LM role.

A failed call is one `LMError` naming the model (never a key), raised by `Embedder.embed`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from memopt.core.errors import ConfigError, LMError
from memopt.core.text import content_words, stem, words
from memopt.lm.spec import LMSpec, client_params, missing_api_key, parse_lm_spec

__all__ = ["Embedder", "LocalEmbedder", "LiteLLMEmbedder", "make_embedder", "EMBEDDING_FORMS", "cosine"]

EMBEDDING_FORMS = ("accepted forms: 'sim' or 'sim:DIMS' (a deterministic local embedding, offline); a LiteLLM "
                   "embedding model ('openai/text-embedding-3-small'), or 'MODEL@http://HOST:PORT/v1' for an "
                   "OpenAI-compatible server")
_SIM = re.compile(r"^sim(?::(?P<dims>\d+))?$")
_BATCH = 64


class Embedder(Protocol):
    """Something that embeds texts: its spec, whether it is simulated, and ``embed``."""

    spec: str
    simulated: bool

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""


@lru_cache(maxsize=262144)
def _slot(feature: str, dims: int) -> tuple[int, float]:
    h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
    return h % dims, 1.0 if h >> 63 else -1.0


@dataclass(frozen=True)
class LocalEmbedder:
    """The deterministic local embedding (see the module docstring)."""

    dims: int = 512
    spec: str = "sim"
    simulated: bool = True

    def _vector(self, text: str) -> list[float]:
        import numpy as np

        features: Counter[str] = Counter()
        for word in content_words(text) or words(text):
            features[stem(word)] += 1
            padded = f"<{word}>"
            features.update(f"#{padded[i:i + 3]}" for i in range(len(padded) - 2))
        vector = np.zeros(self.dims)
        if features:
            slots = [_slot(feature, self.dims) for feature in features]
            weights = [sign * (1.0 + math.log(count)) for (_, sign), count in zip(slots, features.values(),
                                                                                   strict=True)]
            np.add.at(vector, [index for index, _ in slots], weights)
        norm = float(np.linalg.norm(vector)) or 1.0
        return (vector / norm).tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text."""
        return [self._vector(t) for t in texts]


@dataclass(frozen=True)
class LiteLLMEmbedder:
    """A real embedding model called through ``litellm.embedding``."""

    lm: LMSpec
    timeout: float | None = 60.0
    spec: str = ""
    simulated: bool = False

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in batches of 64."""
        import litellm

        out: list[list[float]] = []
        for start in range(0, len(texts), _BATCH):
            batch = [t if t.strip() else " " for t in texts[start:start + _BATCH]]
            try:
                reply = litellm.embedding(model=self.lm.model, input=batch, **client_params(self.lm, self.timeout))
            except Exception as e:
                raise LMError(f"embedding model {self.lm.model!r} failed ({type(e).__name__}: "
                              f"{str(e).splitlines()[0][:200] if str(e) else 'no message'}); check --embedding-lm "
                              "or use 'sim' offline.") from None
            rows = sorted(reply.data, key=lambda row: row["index"])
            out += [list(row["embedding"]) for row in rows]
        return out


def make_embedder(spec: str | LMSpec) -> Embedder:
    """The embedder of a spec (see the module docstring); a malformed spec or a missing key is a `ConfigError`."""
    if isinstance(spec, str) and (sim := _SIM.match(spec.strip())):
        dims = int(sim.group("dims") or 512)
        if not 8 <= dims <= 8192:
            raise ConfigError(f"embedding spec {spec!r}: dimensions must be between 8 and 8192.")
        return LocalEmbedder(dims, spec.strip())
    parsed = spec if isinstance(spec, LMSpec) else parse_lm_spec(spec)
    if parsed.provider or parsed.local:
        raise ConfigError(f"embedding spec {parsed.raw!r}: not an embedding model; {EMBEDDING_FORMS}.")
    if missing := missing_api_key(parsed):
        raise ConfigError(f"embedding spec {parsed.raw!r}: {missing} is not set (keys come from the environment "
                          "only: export it and run again, or use 'sim').")
    return LiteLLMEmbedder(parsed, spec=parsed.raw)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is zero)."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0
