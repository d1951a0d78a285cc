"""LMs: LM specs per role, building DSPy LMs, usage and costs, the reply cache, and the standard signatures.

What it may import: `memopt.core`, `memopt.registry` and `memopt.taxonomy`. SimLM (`memopt.simlm`) is an LM
provider registered here by name (``sim``), so this package never imports it.

The names below are loaded on first use, so ``import memopt.lm`` imports neither DSPy nor LiteLLM
nor the HTTP server. The standard signatures (which need DSPy) live in `memopt.lm.signatures`.
"""

from __future__ import annotations

from memopt.core.lazy import lazy_names

__all__ = [
    "LMSpec",
    "LMRoles",
    "ModelUsage",
    "UsageMeter",
    "SPEC_FORMS",
    "parse_lm_spec",
    "make_lm",
    "describe_lm",
    "api_key_env",
    "explain_lm_error",
]

_HOME = {
    **dict.fromkeys(["LMSpec", "LMRoles", "SPEC_FORMS", "parse_lm_spec", "describe_lm", "api_key_env"],
                    "memopt.lm.spec"),
    **dict.fromkeys(["ModelUsage", "UsageMeter"], "memopt.lm.usage"),
    "make_lm": "memopt.lm.build",
    "explain_lm_error": "memopt.lm.explain",
}


__getattr__ = lazy_names("memopt.lm", _HOME, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
