"""Building `dspy.LM` objects from parsed specs (`make_lm`), and asking again for unparseable replies (`ask`).

- `make_lm` marks the LM it builds with its spec (`spec_of`), so a traced graph can name the LM to replay
  with (a ``local`` or ``@URL`` spec is more than the DSPy model string).
- **Calls of real LMs**: a per-call ``timeout`` (seconds), ``num_retries`` retries with exponential backoff
  (DSPy's: 1, 2, 4 ... s, or the server's ``retry-after``) on rate limits (429), server errors (5xx),
  timeouts and dropped connections, the on-disk reply cache when ``cache`` (`memopt.lm.cache`), and
  ``parse_retries``: a reply no adapter can parse is asked for again that many times, past the cache (`ask`).
- **Engine** (``engine``): ``litellm`` (default) sends a real provider's calls through DSPy's LiteLLM engine;
  ``dspy`` through DSPy's own default engine (``"auto"``: its native client where it can represent the
  request, LiteLLM otherwise), about a third of the client CPU per call (`memopt bench latency`). Several
  endpoints (the Router, `memopt.lm.router`) and ``local`` always use LiteLLM.
- **Adapter**: every LM but ``local`` (which carries `memopt.lm.adapter.SchemaJSONAdapter`) carries a
  `memopt.lm.adapter.SignatureChatAdapter`: DSPy's ChatAdapter, with each signature's system message built once.
"""

from __future__ import annotations

import contextlib
import io
from typing import TYPE_CHECKING, Any

from memopt.core.errors import ConfigError
from memopt.lm.spec import SPEC_FORMS, LMSpec, client_params, missing_api_key, parse_lm_specs
from memopt.lm.usage import PRICES_ATTRIBUTE

if TYPE_CHECKING:
    import dspy

__all__ = ["ENGINES", "make_lm", "spec_of", "specs_of", "ask"]

ENGINES = ("litellm", "dspy")  # how a real provider is called: DSPy's LiteLLM engine, or DSPy's own default


def _check_provider(spec: LMSpec) -> None:
    import litellm

    # LiteLLM prints a coloured banner to stdout before raising on an unknown provider.
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            litellm.get_llm_provider(spec.model, api_base=spec.api_base)
        except Exception:
            tag = spec.model.rpartition("@")[2] if "@" in spec.model and not spec.api_base else ""
            fix = (f"'@{tag}' was read as part of the model name (a version tag); a server URL must look like "
                   "http://HOST:PORT/v1" if tag else "write the provider prefix, or add '@URL' for an "
                   "OpenAI-compatible server")
            raise ConfigError(
                f"LM spec {spec.raw!r}: LiteLLM knows no provider for model {spec.model!r}; {fix}; {SPEC_FORMS}."
            ) from None


def _check_key(spec: LMSpec) -> None:
    if missing := missing_api_key(spec):
        raise ConfigError(f"LM spec {spec.raw!r}: {missing} is not set; LiteLLM reads the API key of "
                          f"{spec.model.split('/', 1)[0]} from it (keys come from the environment only: export it "
                          "and run again, or use --lm sim).")


def make_lm(
    spec: str | LMSpec | list[str | LMSpec],
    *,
    seed: int = 0,
    max_tokens: int | None = None,
    num_retries: int = 3,
    timeout: float | None = None,
    callbacks: list[Any] | None = None,
    cache: bool = False,
    parse_retries: int = 0,
    engine: str = "litellm",
) -> dspy.LM:
    """A `dspy.LM` for a spec: SimLM in-process (``seed`` unless the spec names one), the local server, or LiteLLM.

    A list of several specs gives one LM load-balanced over them (`memopt.lm.router`). For ``local`` it
    starts the server on first use (never retrying a call: ``num_retries`` is ignored). ``cache`` turns on
    the on-disk reply cache for real LMs (`memopt.lm.cache`); SimLM is never cached.
    """
    import dspy

    if engine not in ENGINES:
        raise ConfigError(f"LM engine {engine!r} (--engine / lm.engine): choose one of {', '.join(ENGINES)}.")
    specs = parse_lm_specs(spec)
    parsed = specs[0]
    if cache and not parsed.provider:
        from memopt.lm.cache import configure_cache

        configure_cache()
    if len(specs) > 1:
        from memopt.lm.router import RouterEngine

        for one in specs:
            _check_provider(one)
            _check_key(one)
        lm = dspy.LM(parsed.model, engine=RouterEngine(specs, timeout=timeout), cache=cache, max_tokens=max_tokens,
                     num_retries=num_retries, callbacks=callbacks)
        setattr(lm, PRICES_ATTRIBUTE, _prices(parsed.model))  # DSPy does not price a custom engine's calls
        return _mark(lm, specs, parse_retries)
    if parsed.local:
        from memopt.lm.local import make_local_lm

        lm = make_local_lm(parsed.local, max_tokens=max_tokens, timeout=timeout, callbacks=callbacks, cache=cache)
        return _mark(lm, specs, parse_retries)
    if parsed.provider:
        from memopt.lm.providers import lm_providers

        engine = lm_providers.get(parsed.provider)(parsed, seed)
        return _mark(dspy.LM(parsed.model, engine=engine, cache=False, max_tokens=max_tokens,
                             num_retries=num_retries, callbacks=callbacks), specs, parse_retries)
    _check_provider(parsed)
    _check_key(parsed)
    dspy_engine = "litellm" if engine == "litellm" else "auto"
    return _mark(dspy.LM(parsed.model, engine=dspy_engine, cache=cache, max_tokens=max_tokens,
                         num_retries=num_retries, callbacks=callbacks, **client_params(parsed, timeout)),
                 specs, parse_retries)


_SPEC_ATTRIBUTE = "memopt_spec"
_SPECS_ATTRIBUTE = "memopt_specs"
_PARSE_RETRIES_ATTRIBUTE = "memopt_parse_retries"


def _prices(model: str) -> tuple[float, float] | None:
    """Dollars per input and per output token of ``model`` in LiteLLM's cost map (None when it has no price)."""
    import litellm

    try:
        with contextlib.redirect_stdout(io.StringIO()):
            per_input, _ = litellm.cost_per_token(model=model, prompt_tokens=1, completion_tokens=0)
            _, per_output = litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=1)
    except Exception:
        return None
    return float(per_input), float(per_output)


def _mark(lm: dspy.LM, specs: list[LMSpec], parse_retries: int = 0) -> dspy.LM:
    from memopt.lm.adapter import SignatureChatAdapter, attach_adapter, preferred_adapter

    if preferred_adapter(lm) is None:  # `local` carries its own; the rest: ChatAdapter, system messages built once
        attach_adapter(lm, SignatureChatAdapter())
    setattr(lm, _SPEC_ATTRIBUTE, specs[0].raw if len(specs) == 1 else [s.raw for s in specs])
    setattr(lm, _SPECS_ATTRIBUTE, list(specs))
    setattr(lm, _PARSE_RETRIES_ATTRIBUTE, max(0, int(parse_retries)))
    return lm


def spec_of(lm: Any) -> str | list[str] | None:
    """The spec (or list of specs) `make_lm` built ``lm`` from (None for an LM built otherwise)."""
    return getattr(lm, _SPEC_ATTRIBUTE, None)


def specs_of(lm: Any) -> list[LMSpec] | None:
    """The parsed specs `make_lm` built ``lm`` from (None for an LM built otherwise)."""
    return getattr(lm, _SPECS_ATTRIBUTE, None)


def ask(predictor: Any, *, lm: Any = None, **inputs: Any) -> Any:
    """``predictor(**inputs)``, asked again up to the LM's ``parse_retries`` times when no adapter can parse the reply.

    A retry carries a ``rollout_id`` (DSPy strips it before sending), so it is a new request past the
    reply cache, where the unparseable reply stays. ``lm`` defaults to the current DSPy LM.
    """
    import dspy
    from dspy.utils.exceptions import AdapterParseError

    retries = getattr(lm if lm is not None else dspy.settings.lm, _PARSE_RETRIES_ATTRIBUTE, 0)
    attempt = 0
    while True:
        try:
            return predictor(**inputs, config={"rollout_id": attempt}) if attempt else predictor(**inputs)
        except AdapterParseError:
            if attempt >= retries:
                raise
            attempt += 1
