"""Explaining LM failures: what went wrong with which spec and what to do about it (`explain_lm_error`)."""

from __future__ import annotations

from memopt.core.errors import LMError
from memopt.lm.failures import failure_kind
from memopt.lm.redaction import redact
from memopt.lm.spec import LMSpec, api_key_env

__all__ = ["explain_lm_error"]


def explain_lm_error(spec: LMSpec, exc: BaseException) -> LMError:
    """An `LMError` naming the spec, what went wrong and what to do; secrets from the environment are masked."""
    where = f" at {spec.api_base}" if spec.api_base else " (memopt's llama.cpp server)" if spec.local else ""
    key = api_key_env(spec)
    kind = failure_kind(exc)
    death = None
    if spec.local and kind == "unreachable":
        from memopt.lm.local import server_death

        death = server_death(spec.local)
    advice = {
        "unreachable": f"could not be reached{where}. " + (
            f"{death[0].upper()}{death[1:]}." if death else "The server has stopped; run again." if spec.local
            else "Start the server (for SimLM: `memopt serve`) or fix the URL after '@'."),
        "timeout": f"did not answer in time{where}. Raise the timeout, or check that the server is up and not "
                   "overloaded.",
        "auth": f"rejected the credentials. Set {key or 'the provider API key'} in the environment (keys are read "
                "from the environment only) and try again.",
        "rate_limit": "is rate-limiting requests. Wait, lower the concurrency, or raise num_retries.",
        "parse": "answered, but the reply did not match the requested output format. Try another model or the "
                 "JSON adapter.",
        "server": f"failed with a server error{where}. Check the server's logs and retry.",
        "other": "failed. Check the spec and the provider's settings.",
    }[kind]
    text = str(getattr(exc, "message", None) or exc).strip()  # DSPy's `message` lacks the "[model] " prefix
    detail = redact(text.splitlines()[0] if text else "")[:300]
    return LMError(f"LM {spec.raw!r} {advice} ({type(exc).__name__}: {detail})")
