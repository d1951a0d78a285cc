"""Experiment files: one YAML per `memopt optimize` experiment, validated with pydantic.

Every key is optional except ``pipeline``; unknown keys are errors (typos must not pass silently).
Errors name the file and the key path (``experiments/x.yaml: optimizer.candidates: ...``).

.. code-block:: yaml

    name: quickstart
    pipeline: mem0
    data: {source: "synthetic:conversations=12,sessions=8,seed=0", split: [0.5, 0.25, 0.25], split_seed: 0}
    lm: {task: sim, judge: sim, reflection: sim, concurrency: null, timeout: 120, num_retries: 3,
         parse_retries: 2, cache: true}
    attribution: {method: memtrace, verify: false}
    optimizer: {name: memtrace, feedback: attribution, candidates: 4, ops_per_round: 2, trials: 8, trial_batch: 4,
                search: {top_k: [5, 10, 20]}}
    rounds: 4
    budget: {max_lm_calls: 60000, max_cost_usd: null}
    max_error_rate: 0.2
    seed: 0
    mlflow: {experiment: memopt-quickstart, tracking_uri: null, traces: sample, max_traces: 12}
    confirm: {system: mem0, offline: true, config: null, top_k: 10}   # optional: real Mem0 confirms seed and best
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_serializer,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from memopt.core.errors import ConfigError, DataError
from memopt.core.files import load_yaml, read_text
from memopt.lm.redaction import redact, remember_secrets, secret_key
from memopt.lm.spec import LMSpec, parse_lm_specs, sim_spec

__all__ = ["Experiment", "load_experiment", "apply_overrides"]


def _admits_bool(annotation: Any) -> bool:
    """Whether a field takes true / false itself, or a section (a model) that checks its own fields."""
    if annotation is bool or isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_admits_bool(arg) for arg in get_args(annotation))


def _holds_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return True
    if isinstance(value, dict):
        return any(_holds_bool(v) for v in value.values())
    return isinstance(value, list | tuple) and any(_holds_bool(v) for v in value)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_for_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        """YAML's true / false is no number: ``max_cost_usd: true`` is an error, not $1."""
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and not _admits_bool(field.annotation) and _holds_bool(value):
            raise ValueError("expected a number (or text), not true / false")
        return value


class DataConfig(_Strict):
    """Where the conversations come from and how they are split (by conversation)."""

    source: str = "synthetic"
    conversations: list[str] | None = None
    split: tuple[float, float, float] = (0.5, 0.25, 0.25)
    split_seed: int = 0

    @field_validator("split")
    @classmethod
    def _fractions(cls, value: tuple[float, float, float]) -> tuple[float, float, float]:
        if not all(0 <= v <= 1 for v in value) or value[0] == 0 or value[1] == 0 or \
                not abs(sum(value) - 1.0) <= 1e-6:  # `not <=`: a NaN fails it (it passed `> 1e-6`)
            raise ValueError("three fractions (train, val, test) summing to 1, train and val above 0")
        return value


class LMConfig(_Strict):
    """LM specs per role (`memopt.lm.spec`; several load-balance endpoints), and how calls are made.

    Each role is written as one spec string or a list of them and held as a list of `LMSpec`, parsed once here.

    ``concurrency``: LM calls in flight at once, one number or per role (default: 8 for APIs and servers,
    1 for sim and local; `memopt.lm.pool`). ``timeout``: seconds per call. ``num_retries``: retries with
    backoff on 429 / 5xx / timeouts. ``parse_retries``: new asks for a reply no adapter could parse.
    ``cache``: the on-disk reply cache of real LMs (`memopt.lm.cache`). ``engine``: ``litellm`` (DSPy's
    LiteLLM engine) or ``dspy`` (DSPy's own default, less client CPU per call; `memopt.lm.build.make_lm`).
    """

    task: list[LMSpec] = Field(default_factory=lambda: [sim_spec()])
    judge: list[LMSpec] = Field(default_factory=lambda: [sim_spec()])
    reflection: list[LMSpec] = Field(default_factory=lambda: [sim_spec()])
    concurrency: int | dict[str, int] | None = None
    timeout: float = Field(120.0, gt=0)
    num_retries: int = Field(3, ge=0, le=20)
    parse_retries: int = Field(2, ge=0, le=10)
    cache: bool = True
    engine: Literal["litellm", "dspy"] = "litellm"

    @field_validator("task", "judge", "reflection", mode="before")
    @classmethod
    def _parse_specs(cls, value: Any) -> list[LMSpec]:
        """A spec string or a list of them, parsed here once: past the experiment, roles hold `LMSpec` lists."""
        if not isinstance(value, str | LMSpec | list | tuple) or (
                isinstance(value, list | tuple) and not all(isinstance(v, str | LMSpec) for v in value)):
            raise PydanticCustomError("lm_spec", "an LM spec string, or a list of spec strings")
        try:
            return parse_lm_specs(value)
        except ConfigError as e:
            raise PydanticCustomError("lm_spec", "{why}", {"why": str(e)}) from None

    @field_serializer("task", "judge", "reflection")
    def _spec_text(self, specs: list[LMSpec]) -> str | list[str]:
        """A role as written: one spec string, or the list of several endpoints' specs."""
        return specs[0].raw if len(specs) == 1 else [s.raw for s in specs]


class AttributionConfig(_Strict):
    """How failures are attributed: ``method`` is a registered attribution method (`memopt.attribution.registry`).

    In an optimizer round, ``sample`` caps the new attributions of the round: a stratified sample over question
    category × the op a case was last blamed on (null: attribute every failure); ``replay`` reuses the attribution
    of a case whose ops are byte-identical to when it was attributed (`memopt.attribution.replay`); ``masked``
    also replays each failure blamed upstream with the evidence in the answer op's context and blames the answer op
    when it still answers wrong (`memopt.attribution.masked`: one task and one judge call per such failure).
    ``labels`` names a team's labels (`memopt label`'s ``labels.jsonl``): the cases it flags as no memory failure
    (a wrong expected answer, a wrong judge verdict) leave every round's failures and feedback.
    """

    method: str = "memtrace"
    verify: bool = False
    sample: int | None = Field(60, ge=1)
    replay: bool = True
    masked: bool = True
    labels: str | None = Field(None, description="A team's labels (`memopt label`'s `labels.jsonl`): the cases "
                                                 "it flags as no memory failure leave every round's failures and "
                                                 "feedback.")

    @field_validator("method")
    @classmethod
    def _registered_method(cls, method: str) -> str:
        from memopt.attribution.registry import attribution_methods

        if method not in attribution_methods:
            raise ValueError(attribution_methods.unknown(method))
        return method


class OptimizerConfig(_Strict):
    """Which optimizer, and its options.

    ``feedback`` is what the reflection LM reads, a registered feedback kind (`memopt.feedback.kinds`): memtrace
    takes every kind, gepa those declared ``gepa=True`` (``attribution``, ``outcome``). ``score_only`` is a name
    for memtrace with ``feedback: score``. ``name`` is a registered optimizer (`memopt.optimize.registry`).
    """

    name: str = "memtrace"  # a registered optimizer (`memopt.optimize.registry`)
    feedback: str | None = None
    candidates: int = Field(4, ge=1, le=12)
    ops_per_round: int = Field(2, ge=1, le=8)
    trials: int = Field(8, ge=1, le=200)
    trial_batch: int = Field(4, ge=1, le=64)
    search: dict[str, list[int]] = Field(default_factory=dict)
    min_gain: float = Field(0.0, ge=0.0)
    storage: str | None = None  # Optuna storage shared with `memopt worker` processes (memopt.optimize.storage)
    stop_on_repeat: bool = True  # end the run when a round would see the prompts, knobs and feedback of an earlier one
    # after a rejected round the system is unchanged: reuse its traced training run instead of running it again
    reuse_train: bool = True

    @field_validator("feedback")
    @classmethod
    def _registered_kind(cls, feedback: str | None) -> str | None:
        from memopt.feedback.kinds import feedback_kinds

        if feedback is not None and feedback not in feedback_kinds:
            raise ValueError(feedback_kinds.unknown(feedback))
        return feedback

    @field_validator("name")
    @classmethod
    def _registered_optimizer(cls, name: str) -> str:
        from memopt.optimize.registry import optimizers

        if name not in optimizers:
            raise ValueError(optimizers.unknown(name))
        return name

    @model_validator(mode="after")
    def _feedback_fits(self) -> OptimizerConfig:
        from memopt.optimize.registry import get_optimizer

        if problem := get_optimizer(self.name).feedback_problem(self.feedback):
            raise ValueError(problem)
        return self

    @property
    def feedback_kind(self) -> str:
        """The feedback kind in effect: the one the optimizer reads (``score`` for ``score_only``), else ``attribution``
        unless set."""
        from memopt.optimize.registry import get_optimizer

        return self.feedback or get_optimizer(self.name).feedback or "attribution"


class BudgetConfig(_Strict):
    """The most LM calls (task, judge, reflection and reporting; cached replies included) and dollars the whole
    optimization may spend (``max_cost_usd``: LiteLLM's prices; None = no cost limit)."""

    max_lm_calls: int = Field(100_000, ge=1)
    max_cost_usd: float | None = Field(None, gt=0)


class MLflowConfig(_Strict):
    """Where rounds are logged, and which evaluated cases become MLflow traces (see `memopt.tracking.traces`)."""

    experiment: str = Field("memopt", max_length=500)  # MLflow's limit on an experiment name
    tracking_uri: str | None = None
    # prompts register as <scope>.<pipeline>.<op>; the scope is the experiment's name unless this prefix is set
    # (one per person or stream on a shared server; "" registers <pipeline>.<op>): memopt.tracking.prompts
    prompt_prefix: str | None = Field(None, pattern=r"^([A-Za-z0-9][A-Za-z0-9_-]*)?$", max_length=64)
    traces: Literal["failed", "sample", "all", "none"] = "sample"
    max_traces: int = Field(12, ge=1, le=1000)  # = memopt.tracking.traces.MAX_TRACES

    @field_validator("experiment")
    @classmethod
    def _listable(cls, value: str) -> str:
        if not value.strip() or any(ord(c) < 32 or ord(c) == 127 for c in value):
            raise ValueError("a name with text and no line breaks or control characters (the MLflow UI lists it)")
        return value


class ConfirmConfig(_Strict):
    """A real system that confirms the seed and best prompts on val and test (see `memopt.live.confirm`)."""

    system: Literal["mem0"] = "mem0"
    offline: bool = True
    config: str | None = None
    top_k: int = Field(10, ge=1, le=1000)


class Experiment(_Strict):
    """One `memopt optimize` experiment."""

    name: str = "experiment"
    pipeline: str
    data: DataConfig = Field(default_factory=DataConfig)
    lm: LMConfig = Field(default_factory=LMConfig)
    attribution: AttributionConfig = Field(default_factory=AttributionConfig)
    optimizer: OptimizerConfig = Field(default_factory=OptimizerConfig)
    rounds: int = Field(4, ge=1, le=100)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    max_error_rate: float = Field(0.2, ge=0.0, le=1.0)
    judge_check: Literal["stop", "warn"] = "stop"  # a judge failing its check (`memopt.judge.check`) stops the run,
    # or (warn) the run goes on with a warning every round
    seed: int = 0
    prompts: str | None = None
    knobs: dict[str, int] = Field(default_factory=dict)
    mlflow: MLflowConfig = Field(default_factory=MLflowConfig)
    confirm: ConfirmConfig | None = None


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def _got(error: dict[str, Any]) -> str:
    value = error.get("input")
    if error.get("type") in ("extra_forbidden", "missing") or not isinstance(value, str | int | float):
        return ""
    if any(isinstance(part, str) and secret_key(part) for part in error.get("loc", ())):
        return ""
    return f" (got {redact(str(value))[:60]!r})"


def apply_overrides(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """Set dotted keys (``"optimizer.name"``) in a raw experiment mapping; None values are skipped. A section the
    key goes into that is not a mapping (``budget: 5``) is a `ConfigError` naming it."""
    out = {**raw}
    for dotted, value in overrides.items():
        if value is None:
            continue
        node = out
        *parents, last = dotted.split(".")
        for depth, part in enumerate(parents):
            section = node.get(part)
            if section is not None and not isinstance(section, dict):
                where = ".".join(parents[: depth + 1])
                raise ConfigError(f"{where}: must be a mapping of keys (got {str(section)[:60]!r}), so the "
                                  f"command-line override of {dotted} has nowhere to go; write {where} as keys, "
                                  "see experiments/quickstart.yaml.")
            node[part] = dict(section or {})
            node = node[part]
        node[last] = value
    return out


def load_experiment(path: str | Path, overrides: dict[str, Any] | None = None) -> Experiment:
    """Read and validate an experiment YAML (with command-line overrides applied)."""
    path = Path(path)
    try:
        text = read_text(path, missing="no such experiment file (see experiments/quickstart.yaml).")
    except DataError as e:
        raise ConfigError(str(e)) from None
    try:
        raw = load_yaml(text) or {}  # libyaml where installed: fast, depth-capped
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}: not valid YAML ({' '.join(str(e).split())}).") from None
    except RecursionError:
        raise ConfigError(f"{path}: YAML nested too deeply to read.") from None
    except ValueError as e:  # Python's limit on the digits of an integer
        raise ConfigError(f"{path}: unreadable YAML value ({e}).") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the experiment must be a mapping of keys (pipeline, data, lm, ...).")
    remember_secrets([raw, overrides])  # the passwords of its URIs are masked wherever they show from now on
    try:
        experiment = Experiment.model_validate(apply_overrides(raw, overrides or {}))
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    except ValidationError as e:
        problems = "; ".join(f"{_where(err['loc'])}: {err['msg']}{_got(err)}" for err in e.errors())
        raise ConfigError(f"{path}: {problems}") from None
    from memopt.systems import system_class

    try:
        system = system_class(experiment.pipeline)
    except ConfigError as e:
        raise ConfigError(f"{path}: pipeline: {e}") from None
    unknown = sorted((set(experiment.knobs) | set(experiment.optimizer.search)) - set(system.defaults))
    if unknown:
        raise ConfigError(f"{path}: knobs / optimizer.search: {', '.join(unknown)} not a knob of {experiment.pipeline} "
                          f"(knobs: {', '.join(sorted(system.defaults))}).")
    return experiment
