"""LMs: SimLM (the embedded simulated default), LM specs per role, and the standard signatures.

The names below are loaded on first use, so ``import memopt.lm`` imports neither DSPy nor LiteLLM
nor the HTTP server. The standard signatures (which need DSPy) live in `memopt.lm.signatures`.
"""

from __future__ import annotations

from memopt.lazy import lazy_names

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
    "SimServer",
    "ServerStats",
    "SimLM",
    "SimEngine",
]

_HOME = {
    **dict.fromkeys(["LMSpec", "LMRoles", "SPEC_FORMS", "parse_lm_spec", "describe_lm", "api_key_env"],
                    "memopt.lm.spec"),
    **dict.fromkeys(["ModelUsage", "UsageMeter"], "memopt.lm.usage"),
    "make_lm": "memopt.lm.build",
    "explain_lm_error": "memopt.lm.explain",
    **dict.fromkeys(["SimServer", "ServerStats"], "memopt.simlm"),
    **dict.fromkeys(["SimLM", "SimEngine"], "memopt.simlm"),
}


__getattr__ = lazy_names("memopt.lm", _HOME, globals())


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
