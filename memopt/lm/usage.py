"""Metering LM usage: calls, replies served from the cache, tokens and cost per LM model string.

`UsageMeter` counts through a DSPy callback. It reads tokens and cost from the LM's history entries (DSPy
records them by default; the cost is LiteLLM's, from its local cost map, and None when it has no price for
the model; an LM whose engine DSPy does not price carries its prices in ``PRICES_ATTRIBUTE``), never bills
a cached reply, and never breaks the run it observes.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelUsage", "UsageMeter", "PRICES_ATTRIBUTE"]

logger = logging.getLogger(__name__)

PRICES_ATTRIBUTE = "memopt_prices"  # (dollars per input token, per output token) set by `memopt.lm.build.make_lm`


@dataclass(frozen=True)
class ModelUsage:
    """LM usage of one model: calls (failed and cached ones included), failures, replies served from the cache,
    tokens in and out, cost in dollars of the priced calls, and calls LiteLLM could not price (``unpriced``)."""

    calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached: int = 0
    cost: float = 0.0
    unpriced: int = 0

    def __add__(self, other: ModelUsage) -> ModelUsage:
        return ModelUsage(self.calls + other.calls, self.errors + other.errors,
                          self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens,
                          self.cached + other.cached, self.cost + other.cost, self.unpriced + other.unpriced)

    @property
    def made(self) -> int:
        """Calls that went out to the LM (not served from the cache); retries of one call count once."""
        return self.calls - self.cached

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens


def _ignore(*args: Any, **kwargs: Any) -> None:
    return None


class UsageMeter:
    """Counts LM calls, cached replies, tokens and cost per LM model string; a DSPy callback (``with meter.track():``).

    Usable as ``dspy.configure(callbacks=[meter])``, ``dspy.LM(..., callbacks=[meter])``, or for a
    block with `track`. Thread-safe. Tokens and cost come from the history entries DSPy records for
    each call; a reply served from the cache is counted as ``cached`` and adds no tokens and no cost;
    with ``disable_history`` calls are still counted, the rest is not. It implements DSPy's
    `BaseCallback` protocol by duck typing (every hook but the LM ones is a no-op), so importing
    it does not import DSPy.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._usage: dict[str, ModelUsage] = {}
        self._calls: dict[str, Any] = {}
        self._cursor: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()
        self._in_flight: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("on_"):
            return _ignore
        raise AttributeError(name)

    @contextlib.contextmanager
    def track(self) -> Iterator[UsageMeter]:
        """Add this meter to ``dspy.settings.callbacks`` for the block (and threads DSPy starts in it)."""
        import dspy

        with dspy.context(callbacks=[*dspy.settings.callbacks, self]):
            yield self

    def usage(self) -> dict[str, ModelUsage]:
        """Usage so far, per LM model string."""
        with self._lock:
            return dict(self._usage)

    def total(self) -> ModelUsage:
        """Usage so far, all models together."""
        return sum(self.usage().values(), ModelUsage())

    def reset(self) -> None:
        """Forget all counts."""
        with self._lock:
            self._usage.clear()

    def on_lm_start(self, call_id: str, instance: Any, inputs: dict[str, Any]) -> None:
        """DSPy callback: an LM call begins."""
        try:
            with self._lock:
                if not self._in_flight.get(instance):  # entries before this call are not ours to count
                    self._cursor[instance] = _last_uuid(instance)
                self._in_flight[instance] = self._in_flight.get(instance, 0) + 1
                self._calls[call_id] = instance
        except Exception:
            logger.warning("UsageMeter could not record the start of an LM call", exc_info=True)

    def on_lm_end(self, call_id: str, outputs: Any, exception: BaseException | None = None) -> None:
        """DSPy callback: an LM call ended; count it and the tokens of its history entry."""
        try:
            with self._lock:
                instance = self._calls.pop(call_id, None)
                if instance is None:
                    return
                self._in_flight[instance] -= 1
                done = ModelUsage(calls=1, errors=int(exception is not None)) + self._new_usage(instance)
                model = str(getattr(instance, "model", type(instance).__name__))
                self._usage[model] = self._usage.get(model, ModelUsage()) + done
        except Exception:
            logger.warning("UsageMeter could not count an LM call", exc_info=True)

    def _new_usage(self, instance: Any) -> ModelUsage:
        """Tokens, cost and cache hits of the history entries appended since the last one counted (each once)."""
        history = list(getattr(instance, "history", None) or ())
        cursor = self._cursor.get(instance)
        fresh = []
        for entry in reversed(history):
            if cursor is not None and entry.get("uuid") == cursor:
                break
            fresh.append(entry)
        if history:
            self._cursor[instance] = history[-1].get("uuid")
        hits = [_served_from_cache(entry) for entry in fresh]
        billed = [entry for entry, hit in zip(fresh, hits, strict=True) if not hit]
        usages = [entry.get("usage") or {} for entry in billed]
        prices = getattr(instance, PRICES_ATTRIBUTE, None)
        costs = [entry.get("cost") if entry.get("cost") is not None or prices is None else
                 int(u.get("prompt_tokens") or 0) * prices[0] + int(u.get("completion_tokens") or 0) * prices[1]
                 for entry, u in zip(billed, usages, strict=True)]
        return ModelUsage(input_tokens=sum(int(u.get("prompt_tokens") or 0) for u in usages),
                          output_tokens=sum(int(u.get("completion_tokens") or 0) for u in usages),
                          cached=sum(hits), cost=sum(float(c) for c in costs if c is not None),
                          unpriced=sum(c is None for c in costs))


def _served_from_cache(entry: dict[str, Any]) -> bool:
    """Whether a history entry's reply came from DSPy's cache: LiteLLM's response says so; DSPy's own engine
    only records it as an empty usage (a live reply always reports, or is given, its token counts)."""
    return bool(getattr(entry.get("response"), "cache_hit", False)) or entry.get("usage") == {}


def _last_uuid(instance: Any) -> str | None:
    history = getattr(instance, "history", None) or ()
    return history[-1].get("uuid") if history else None
