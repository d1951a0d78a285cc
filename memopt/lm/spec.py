"""LM specs: the one string that names an LM, parsed once into an `LMSpec`, and what it needs to be called.

Accepted forms (``SPEC_FORMS``): ``sim`` or ``sim:SEED`` (SimLM, the embedded simulator); ``local`` or
``local:smollm2`` (SmolLM2-135M-Instruct on a llama.cpp server that memopt starts and stops itself, see
`memopt.lm.local`; needs ``memopt[local]``); any LiteLLM model string with its provider prefix
(``openai/gpt-4.1-mini``, ``anthropic/claude-...``, ``ollama_chat/qwen2.5:7b``); either of the latter followed
by ``@http://HOST:PORT/v1`` for an OpenAI-compatible server (its ``api_base``). Behind ``@URL`` a model with
no provider prefix is served as ``openai/MODEL``. `parse_lm_spec` checks the form without importing LiteLLM;
`memopt.lm.build.make_lm` checks that LiteLLM knows the provider.

Specs are parsed at the boundary (the experiment file, command-line options); code past it takes `LMSpec`
values. **API keys come from the environment only**, where LiteLLM reads them. They are never part of a
spec, an `LMSpec`, `describe_lm` output, a log line or an error message; a URL holding credentials or a
query string is refused.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from memopt.core.errors import ConfigError
from memopt.lm.redaction import mask_userinfo

__all__ = [
    "SPEC_FORMS",
    "ROLES",
    "SIM_MODEL",
    "LMSpec",
    "LMRoles",
    "SpecInput",
    "parse_lm_spec",
    "parse_lm_specs",
    "as_spec",
    "sim_spec",
    "spec_list",
    "api_key_env",
    "missing_api_key",
    "describe_lm",
    "client_params",
]

SPEC_FORMS = (
    "accepted forms: 'sim' or 'sim:SEED' (the simulated LM); 'local' or 'local:smollm2' (a tiny real LM on a "
    "llama.cpp server memopt starts itself; pip install -e '.[local]'); a LiteLLM model with its provider "
    "('openai/gpt-4.1-mini', 'anthropic/claude-sonnet-4-5', 'ollama_chat/qwen2.5:7b'); either of the "
    "latter followed by '@http://HOST:PORT/v1' for an OpenAI-compatible server ('qwen2.5@http://127.0.0.1:8008/v1')"
)
ROLES = ("task", "judge", "reflection")

SIM_MODEL = "sim/memopt"
_SIM = re.compile(r"^sim(?::(?P<seed>.*))?$")
_LOCAL = re.compile(r"^local(?::(?P<name>.*))?$")
_LOCAL_DEFAULT = "smollm2"
_MODEL = re.compile(r"^[\w.:/@+-]+$")
_URL_START = re.compile(r"@(?=[A-Za-z][A-Za-z0-9+.-]*://)")


@dataclass(frozen=True)
class LMSpec:
    """A parsed LM spec: the DSPy model string, the server URL if any, whether it is SimLM, the local model if any."""

    raw: str
    model: str
    api_base: str | None = None
    simulated: bool = False
    seed: int | None = None
    local: str | None = None
    provider: str | None = None  # an in-process LM provider (`memopt.lm.providers`): ``sim`` or a plug-in's name
    arg: str | None = None  # what follows ``NAME:`` in a plug-in provider's spec


SpecInput = str | LMSpec | Sequence[str | LMSpec]  # what a public entry (make_lm, run_pipeline) parses once


def _bad(spec: str, why: str) -> ConfigError:
    return ConfigError(f"LM spec {mask_userinfo(spec)!r}: {why}; {SPEC_FORMS}.")


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


def _plugin_provider(text: str) -> LMSpec | None:
    """A spec naming a plug-in's in-process LM provider (``NAME`` or ``NAME:ARG``), else None."""
    name, _, arg = text.partition(":")
    if "/" in text or "@" in text or not name.isidentifier() or name in ("sim", "local"):
        return None
    from memopt.lm.providers import lm_providers

    if name not in lm_providers:
        return None
    provider = lm_providers.get(name)
    return LMSpec(raw=text, model=f"{name}/memopt", simulated=provider.simulated, provider=name, arg=arg or None)


def parse_lm_spec(spec: str) -> LMSpec:
    """Parse an LM spec string (see ``SPEC_FORMS``); raises `ConfigError` naming the spec if malformed."""
    if not isinstance(spec, str) or not spec.strip():
        raise _bad(str(spec) if isinstance(spec, str) else repr(spec), "the spec is empty")
    text = spec.strip()
    if sim := _SIM.match(text):
        return LMSpec(raw=text, model=SIM_MODEL, simulated=True, seed=_sim_seed(text, sim.group("seed")),
                      provider="sim")
    if plugged := _plugin_provider(text):
        return plugged
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
        specs = [as_spec(v) for v in value]
        if len(specs) > 1 and any(s.provider or s.local for s in specs):
            raise ConfigError(f"LM specs {', '.join(s.raw for s in specs)}: a list of endpoints may hold only "
                              "LiteLLM or '@URL' specs ('sim', 'local' and in-process providers run alone).")
        return specs
    return [as_spec(value)]


def sim_spec(seed: int | None = None) -> LMSpec:
    """The spec of SimLM (``sim``, or ``sim:SEED`` with a seed), built without parsing."""
    return LMSpec(raw="sim" if seed is None else f"sim:{seed}", model=SIM_MODEL, simulated=True, seed=seed,
                  provider="sim")


def spec_list(value: LMSpec | Sequence[LMSpec]) -> list[LMSpec]:
    """One parsed spec or several (the endpoints of one role) as a list; a string is refused (parse it first)."""
    if isinstance(value, LMSpec):
        return [value]
    if isinstance(value, str) or not all(isinstance(v, LMSpec) for v in value):
        raise TypeError(f"expected LMSpec values (parse spec strings with parse_lm_specs), got {value!r}")
    return list(value)


def _sim_seed(spec: str, seed: str | None) -> int | None:
    if seed is None:
        return None
    if not seed.isdigit():
        raise _bad(spec, f"the SimLM seed {seed!r} is not a non-negative integer")
    return int(seed)


def as_spec(spec: str | LMSpec) -> LMSpec:
    """``spec`` itself when parsed already, else `parse_lm_spec` of it."""
    return spec if isinstance(spec, LMSpec) else parse_lm_spec(spec)


def api_key_env(spec: LMSpec) -> str | None:
    """Name of the environment variable LiteLLM reads the API key from (``OPENAI_API_KEY``); None for sim and local."""
    if spec.simulated or spec.local:
        return None
    provider = spec.model.split("/", 1)[0] if "/" in spec.model else "openai"
    return f"{re.sub(r'[^A-Za-z0-9]', '_', provider).upper()}_API_KEY"


def describe_lm(spec: LMSpec) -> dict[str, Any]:
    """What to log about an LM: model, api_base, simulated, seed, local model. Never a key."""
    return {"model": spec.model, "api_base": spec.api_base, "simulated": spec.simulated, "seed": spec.seed,
            "local": spec.local}


# Providers whose credentials may come from elsewhere than an environment variable (cloud IAM, instance roles,
# Azure AD): a key LiteLLM misses in the environment is not proof that calls will fail.
_KEYS_ELSEWHERE = ("bedrock", "sagemaker", "vertex_ai", "azure", "watsonx", "oci")


def missing_api_key(spec: LMSpec) -> str | None:
    """The environment variable an LM spec needs and lacks (as LiteLLM's `validate_environment` names it), or None.

    None for sim, local and ``@URL`` specs (a local server takes any key), for providers that need no key
    (``ollama_chat``), and for cloud providers whose credentials may come from elsewhere (``_KEYS_ELSEWHERE``).
    """
    import litellm

    if spec.simulated or spec.local or spec.api_base:
        return None
    provider = spec.model.split("/", 1)[0]
    if provider.startswith(_KEYS_ELSEWHERE):
        return None
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            found = litellm.validate_environment(model=spec.model)
        except Exception:
            return None
    missing = [name for name in found.get("missing_keys") or [] if re.search(r"API_?KEY$", name, re.IGNORECASE)]
    if found.get("keys_in_environment") or not missing:
        return None
    return " or ".join(missing)


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


def _role_spec(role: str, spec: str | LMSpec) -> LMSpec:
    try:
        return as_spec(spec)
    except ConfigError as e:
        raise ConfigError(f"{role} LM: {e}") from None


@dataclass(frozen=True)
class LMRoles:
    """The LM spec of each role: task (runs the memory system), judge (grades), reflection (rewrites prompts).

    Spec strings given to the constructor are parsed too: ``LMRoles(task="sim:1")``.
    """

    task: LMSpec = field(default_factory=sim_spec)
    judge: LMSpec = field(default_factory=sim_spec)
    reflection: LMSpec = field(default_factory=sim_spec)

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
