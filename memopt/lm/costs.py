"""What LM usage costs: dollars from LiteLLM's local cost map, labelled honestly.

- A role whose LM is SimLM costs $0 and says so (``"$0 (simulated)"``); the ``local`` LM costs $0
  (``"$0 (local)"``).
- Otherwise the cost is the sum of what LiteLLM priced for each call that went out (replies served
  from the cache cost nothing). When LiteLLM has no price for the model (a self-hosted model behind
  ``@URL`` under a name it does not know), the cost is ``"unknown"`` (``cost_usd`` None).
- `price` prices token counts for a spec (the basis of `memopt optimize --estimate`); `priced`
  says whether LiteLLM knows the model's price at all (``--max-cost`` needs it).
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from memopt.lm.spec import LMSpec, spec_list
from memopt.lm.usage import ModelUsage

__all__ = ["cost_label", "usage_report", "price", "priced", "free"]


def free(specs: LMSpec | Sequence[LMSpec]) -> str | None:
    """Why LMs (a parsed spec or a list of them) cost nothing (``"simulated"``, ``"local"``), or None."""
    parsed = spec_list(specs)
    if not parsed:
        return None
    if all(s.simulated for s in parsed):
        return "simulated"
    if all(s.local for s in parsed):
        return "local"
    return None


def _cost(usage: ModelUsage, specs: list[LMSpec]) -> float | None:
    if free(specs):
        return 0.0
    return None if usage.unpriced else round(usage.cost, 6)


def cost_label(cost_usd: float | None, why_free: str | None = None) -> str:
    """``"$0.0123"``, ``"$0 (simulated)"`` or ``"unknown"``."""
    if why_free:
        return f"$0 ({why_free})"
    return "unknown" if cost_usd is None else f"${cost_usd:.4f}"


def usage_report(usage: ModelUsage, specs: list[LMSpec]) -> dict[str, Any]:
    """Calls (asked, made, from cache, failed), tokens and cost of the LMs ``specs`` (one role), as plain data."""
    cost = _cost(usage, specs)
    why = free(specs)
    out = asdict(usage)
    out.pop("cost")
    out.pop("unpriced")
    return {**out, "made": usage.made, "cost_usd": cost, "cost": cost_label(cost, why)}


def _quiet_litellm() -> Any:
    with contextlib.redirect_stdout(io.StringIO()):
        import litellm
    return litellm


def price(spec: LMSpec | Sequence[LMSpec], input_tokens: int, output_tokens: int) -> float | None:
    """Dollars for these tokens at LiteLLM's price of the spec's model (0 for sim and local; None if unknown)."""
    parsed = spec_list(spec)
    if free(parsed):
        return 0.0
    litellm = _quiet_litellm()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            prompt, completion = litellm.cost_per_token(model=parsed[0].model, prompt_tokens=input_tokens,
                                                        completion_tokens=output_tokens)
    except Exception:
        return None
    return round(float(prompt) + float(completion), 6)


def priced(spec: LMSpec | Sequence[LMSpec]) -> bool:
    """Whether a spec's cost is known: SimLM, local, or a model LiteLLM's cost map prices."""
    return price(spec, 1000, 1000) is not None
